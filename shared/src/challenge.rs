//! Challenge detection (DESIGN §4): CAPTCHAs, MFA/OTP entry, passkeys,
//! password logins, OAuth consent screens and block pages.
//!
//! The content script only gathers [`PageSignals`] (cheap DOM facts); the
//! decision is this pure function, so it is the same everywhere and is
//! tested natively over fixture data.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChallengeKind {
    Captcha,
    Mfa,
    Passkey,
    Login,
    OauthConsent,
    Blocked,
}

impl ChallengeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChallengeKind::Captcha => "captcha",
            ChallengeKind::Mfa => "mfa",
            ChallengeKind::Passkey => "passkey",
            ChallengeKind::Login => "login",
            ChallengeKind::OauthConsent => "oauth_consent",
            ChallengeKind::Blocked => "blocked",
        }
    }
}

/// A detected challenge and the evidence that decided it (short, no values).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Challenge {
    pub kind: ChallengeKind,
    pub evidence: String,
}
