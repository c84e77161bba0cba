//! Which fields must never show their value in a snapshot (DESIGN §6).
//!
//! TODO(shared): DESIGN §1 puts sensitive-field detection in `shared`; this
//! is the content script's copy until `shared` grows the rule set, then this
//! module should call it.

/// Words (after splitting on non-letters and camelCase) that make a field
/// sensitive on their own.
const WORDS: &[&str] =
    &["pin", "otp", "totp", "ssn", "token", "cvv", "cvc", "cvv2", "csc", "pwd", "iban", "passwd", "pass"];

/// Substrings of the words glued together ("api key" → "apikey").
const GLUED: &[&str] = &[
    "password",
    "passcode",
    "passphrase",
    "passwort",
    "kennwort",
    "contraseña",
    "contrasena",
    "motdepasse",
    "senha",
    "пароль",
    "密码",
    "secret",
    "apikey",
    "accesstoken",
    "authtoken",
    "authcode",
    "cardnumber",
    "ccnumber",
    "creditcard",
    "cardverification",
    "securitycode",
    "onetimecode",
    "onetimepassword",
    "verificationcode",
    "pincode",
    "socialsecurity",
    "routingnumber",
    "accountnumber",
];

/// `autocomplete` tokens that mark a sensitive field.
fn autocomplete_sensitive(ac: &str) -> bool {
    ac.split_whitespace().any(|t| {
        let t = t.to_ascii_lowercase();
        t.starts_with("cc-") || t == "one-time-code" || t == "current-password" || t == "new-password"
    })
}

/// True when `text` (a name, id, label or placeholder) names a secret.
pub fn text_sensitive(text: &str) -> bool {
    if text.is_empty() {
        return false;
    }
    let mut norm = String::with_capacity(text.len() + 8);
    let mut prev_lower = false;
    for c in text.chars() {
        if c.is_uppercase() && prev_lower {
            norm.push(' ');
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        if c.is_alphanumeric() {
            norm.extend(c.to_lowercase());
        } else {
            norm.push(' ');
            prev_lower = false;
        }
    }
    if norm.split_whitespace().any(|w| WORDS.contains(&w)) {
        return true;
    }
    let glued: String = norm.split_whitespace().collect();
    GLUED.iter().any(|g| glued.contains(g))
}

/// Decides from what the DOM says about a field.
pub fn field_sensitive(input_type: &str, autocomplete: &str, texts: &[&str]) -> bool {
    input_type.eq_ignore_ascii_case("password")
        || autocomplete_sensitive(autocomplete)
        || texts.iter().any(|t| text_sensitive(t))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_recognised() {
        for t in [
            "password",
            "Passcode",
            "user_pin",
            "pinCode",
            "OTP",
            "api-key",
            "API Key",
            "apiKey",
            "card number",
            "cardNumber",
            "cc-number",
            "CVV",
            "IBAN",
            "ssn",
            "one-time-code",
            "client_secret",
            "accessToken",
            "Mot de passe",
        ] {
            assert!(text_sensitive(t), "{t}");
        }
        assert!(field_sensitive("password", "", &[]));
        assert!(field_sensitive("text", "cc-csc", &[]));
        assert!(field_sensitive("text", "one-time-code", &[]));
    }

    #[test]
    fn ordinary_fields_are_not() {
        for t in ["email", "Shipping address", "spinner", "First name", "Search", "Caribbean", "opinion", "Ibanez"] {
            assert!(!text_sensitive(t), "{t}");
        }
        assert!(!field_sensitive("text", "email", &["Email", "email"]));
    }
}
