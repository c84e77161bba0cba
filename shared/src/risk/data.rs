//! The rules as data: the keyword lists of the first seven languages
//! (en de fr es pt it nl), the lists of look-alikes, URL path words and
//! icon labels, and the shape of a [`Language`] table that
//! `languages.rs` and `lang/*.tsv` add. Compiled into phrase sets by
//! `matcher.rs`; applied by `rules.rs`. Every keyword has a row in
//! `fixtures/risk/controls.tsv` (tested in `risk.rs`'s tests).

use super::*;

/// One keyword rule over names (and option and context labels).
pub struct KeywordRule {
    pub id: &'static str,
    /// Shown in reasons: `name matches "delete" (delete/remove)`.
    pub label: &'static str,
    pub risk: RiskLevel,
    /// Keyword phrases; see the module docs for `*`.
    pub keywords: &'static [&'static str],
    /// Phrases that cancel a keyword match they cover ("order by" is a sort
    /// menu, not an order). Same syntax as keywords.
    pub not_phrases: &'static [&'static str],
}

/// Deletion, removal, closing accounts, ending subscriptions.
pub const DESTRUCTIVE: KeywordRule = KeywordRule {
    id: "destructive",
    label: "delete/remove",
    risk: RiskLevel::High,
    keywords: &[
        // en
        "delete",
        "deletion",
        "remove",
        "erase",
        "destroy",
        "discard",
        "wipe",
        "purge",
        "move to trash",
        "move to bin",
        "empty trash",
        "empty bin",
        "close account",
        "close my account",
        "close your account",
        "deactivat*", // deactivate, deactivated, deactivation
        "cancel subscription",
        "cancel my subscription",
        "cancel your subscription",
        "cancel membership",
        "cancel plan",
        "cancel order",
        "cancel booking",
        "cancel reservation",
        "end subscription",
        "unsubscrib*", // unsubscribe, unsubscribing
        "terminate",
        "uninstall",
        // de
        "lösch*",    // löschen, lösche, löscht, Löschung
        "*löschung", // Kontolöschung, Datenlöschung
        "entfernen", // not entfern*: "Entfernung" is a distance
        "entferne",
        "entfernt",
        "konto schließen",
        "konto kündigen",
        "kündig*", // kündigen, Kündigung
        "abo beenden",
        "abbestell*", // abbestellen (unsubscribe)
        "deaktivier*",
        "verwerfen",
        "papierkorb leeren",
        "in den papierkorb",
        "vernichten",
        "deinstallieren",
        // fr
        "supprim*", // supprimer, supprimez, suppression
        "effac*",   // effacer, effacez
        "retirer",
        "retirez",
        "fermer le compte",
        "fermer mon compte",
        "fermer votre compte",
        "clôtur*", // clôturer, clôture
        "désactiv*",
        "résili*", // résilier, résiliation
        "désabonn*",
        "désinscri*", // désinscrire, désinscription
        "annuler l abonnement",
        "annuler mon abonnement",
        "annuler abonnement",
        "annuler la commande",
        "annuler la réservation",
        "vider la corbeille",
        "mettre à la corbeille",
        "désinstaller",
        // es / pt (shared words listed once)
        "elimin*", // eliminar, elimina, eliminación (es, pt, it)
        "borrar",  // not borr*: "borrador" is a draft
        "borra",
        "borre",
        "quitar",
        "quita",
        "suprimir",
        "descartar",
        "cerrar cuenta",
        "cerrar mi cuenta",
        "cancelar suscripción",
        "cancelar mi suscripción",
        "cancelar la suscripción",
        "cancelar pedido",
        "cancelar reserva",
        "dar de baja",
        "darse de baja",
        "darme de baja",
        "desuscrib*",
        // desactivar (es): "désactiv*" above folds to the same keyword
        "vaciar papelera",
        "mover a la papelera",
        // pt
        "excluir", // not exclu*: "exclusivo"
        "exclua",
        "exclui",
        "apagar",
        "apague",
        "remover",
        "encerrar conta",
        "encerrar a conta",
        "fechar conta",
        "fechar a conta",
        "cancelar assinatura",
        "cancelar a assinatura",
        "cancelar minha assinatura",
        "cancelar subscrição",
        "cancelar inscrição",
        "descadastr*",
        "desinscrev*",
        "desativ*", // desativar (pt)
        "esvaziar lixeira",
        "mover para a lixeira",
        "mover para o lixo",
        // it
        "cancella", // not cancell*: English "cancelled orders" is a list
        "cancellare",
        "cancellazione",
        "rimuov*", // rimuovi, rimuovere
        "chiudi account",
        "chiudi l account",
        "chiudi il mio account",
        "chiudere l account",
        "disdi*", // disdire, disdici, disdetta
        "annulla abbonamento",
        "annulla l abbonamento",
        "annulla ordine",
        "disiscriv*", // disiscriviti, disiscriversi
        "disattiv*",
        "svuota cestino",
        "sposta nel cestino",
        "scarta",
        "disinstalla",
        // nl
        "verwijder*", // verwijderen, verwijder
        "wissen",
        "wis",
        "account sluiten",
        "account opheffen",
        "opzeg*", // opzeggen
        "zeg op",
        "uitschrijv*", // uitschrijven
        "afmelden",    // also "log out" in some UIs: asking is fine
        "deactiveer*",
        "deactiveren",
        "prullenbak legen",
        "naar prullenbak",
        "weggooien",
        "verwerpen",
    ],
    not_phrases: &[],
};

/// Money, orders, bookings, subscriptions.
pub const PAYMENT: KeywordRule = KeywordRule {
    id: "payment",
    label: "pay/buy/order",
    risk: RiskLevel::High,
    keywords: &[
        // en
        "pay",
        "pay now",
        "make payment",
        "make a payment",
        "submit payment",
        "confirm payment",
        "buy",
        "purchas*", // purchase, purchasing
        "order",
        "order now",
        "place order",
        "place your order",
        "pre order",
        "preorder",
        "checkout",
        "check out",
        "transfer*", // transfer, transfers, transferir (es/pt)
        "send money",
        "donat*", // donate, donation
        "subscribe",
        "subscribe now",
        "book",
        "book now",
        "reserve",
        "rent",
        "confirm*", // confirm, confirmation, confirmar (es/pt), confirmer (fr)
        "upgrade",
        // de
        "bezahl*", // bezahlen, Bezahlung
        "zahlen",
        "jetzt zahlen",
        "zahlung bestätigen",
        "kaufen",
        "kaufe",
        "jetzt kaufen",
        "bestellen", // not bestell*: "Meine Bestellungen" is a list
        "bestelle",
        "vorbestellen",
        "kostenpflichtig bestellen",
        "zahlungspflichtig bestellen",
        "bestellung abschicken",
        "bestellung absenden",
        "bestellung aufgeben",
        "zur kasse",
        "kasse",
        "überweis*", // überweisen, Überweisung
        "spenden",
        "abonnier*", // abonnieren
        "buchen",
        "jetzt buchen",
        "reservieren",
        "mieten",
        "bestätig*", // bestätigen, Bestätigung
        // fr
        "payer",
        "payez",
        "procéder au paiement",
        "valider le paiement",
        "acheter",
        "achetez",
        "finaliser l achat",
        "commander",
        "commandez",
        "passer la commande",
        "passer commande",
        "valider la commande",
        "valider ma commande",
        "virement",
        "faire un don",
        "abonner", // s'abonner
        "abonnez",
        "réserv*", // réserver, réservation, reservar (es/pt), reserveren (nl)
        "valider",
        "passer à la caisse",
        // es
        "pagar",
        "paga",
        "pague",
        "comprar",
        "compra",
        "finalizar compra",
        "realizar pedido",
        "hacer pedido",
        "tramitar pedido",
        "pedir",
        "donar",
        "suscrib*", // suscribirse, suscríbete
        "tramitar",
        // pt
        "fazer pedido",
        "finalizar pedido",
        "encomendar",
        "doar",
        "assinar", // subscribe / sign
        "assine",
        "inscrev*", // inscrever-se
        // it
        "pagare",
        "paga ora",
        "procedi al pagamento",
        "acquist*", // acquista, acquistare, acquisto
        "ordina",
        "ordinare",
        "ordina ora",
        "invia ordine",
        "effettua ordine",
        "bonifico",
        "trasferisci",
        "trasferire",
        "dona",
        "fai una donazione",
        "abbonati",
        "abbonarsi",
        "prenot*",  // prenota, prenotare, prenotazione
        "conferm*", // conferma, confermare
        "vai alla cassa",
        // nl
        "betal*", // betalen, betaal, betaling
        "kopen",
        "koop",
        "nu kopen",
        "bestel",
        "bestelling plaatsen",
        "afreken*", // afrekenen
        "overmaken",
        "overschrijven",
        "doneer*",
        "doneren",
        "abonneer*",
        "abonneren",
        "boeken",
        "boek nu",
        "bevestig*", // bevestigen
    ],
    not_phrases: &[
        "order by",
        "sort order",
        "sort by order",
        "order history",
        "order status",
        "order details",
        "order number",
        "track order",
        "track your order",
        "address book",
        "e book",
        "phone book",
        "ordina per",
        "transfer protocol",
    ],
};

/// Sending, posting, publishing, replying, inviting, sharing, submitting.
pub const SEND: KeywordRule = KeywordRule {
    id: "send",
    label: "send/publish",
    risk: RiskLevel::High,
    keywords: &[
        // en
        "send",
        "send now",
        "post",
        "post comment",
        "publish",
        "reply",
        "reply all",
        "invite",
        "share",
        "submit",
        "tweet",
        "retweet",
        "repost",
        "comment",
        "apply now",
        "easy apply",
        "submit application",
        // de
        "senden", // not send*: "Sendungsverfolgung" is parcel tracking
        "sende",
        "jetzt senden",
        "absend*",
        "abschick*",
        "verschicken",
        "veröffentlich*",
        "antwort*", // antworten, Antwort
        "einlad*",  // einladen, Einladung
        "teilen",
        "teile",
        "posten",
        "einreich*",
        "übermitteln",
        "kommentieren",
        "jetzt bewerben",
        // fr
        "envoy*", // envoyer, envoyez
        "envoi",
        "publier",
        "publiez",
        "répond*", // répondre, répondez
        "invit*",  // invite, inviter, invitation, invitar (es), invita (it)
        "partag*", // partager
        "soumet*", // soumettre
        "poster",
        "commenter",
        "transmettre",
        "postuler",
        // es
        "enviar", // not envi*: "envío" is shipping
        "envia",
        "envie",
        "publicar",
        "publica",
        "respond*", // responder, respond
        "compart*", // compartir
        "comentar",
        "postular",
        "postularme",
        // pt
        "convid*", // convidar
        "compartilh*",
        "partilh*",
        "submet*", // submeter
        "candidatar",
        "candidatar se",
        // it
        "invia",
        "inviare",
        "pubblic*", // pubblica, pubblicare
        "rispond*",
        "condivid*",
        "commenta",
        "candidati",
        // nl
        "verzenden", // not verzend*: "verzendkosten" is shipping cost
        "verzend",
        "verstuur*",
        "versturen",
        "stuur",
        "publiceer*",
        "publiceren",
        "beantwoord*",
        "antwoord*",
        "uitnodig*",
        "delen",
        "deel",
        "indienen", // not indien*: "indien" means "if"
        "plaatsen",
        "reageren",
        "solliciteren",
    ],
    not_phrases: &[
        "publish date",
        "publishing date",
        "post date",
        "post office",
        "share price",
        "pubblicita",
        "send date",
        // "guest", not an invitation: "Continuar como invitado".
        "invitado",
        "invitados",
        "convidado",
        "convidados",
    ],
};

/// Agreeing to terms, giving consent.
pub const CONSENT: KeywordRule = KeywordRule {
    id: "consent",
    label: "consent/terms",
    risk: RiskLevel::High,
    keywords: &[
        // en
        "consent",
        "agree", // not agree*: "User agreement" is a link to read
        "agreed",
        "i agree",
        "accept",
        "accept all",
        "accept terms",
        "accept cookies",
        // de
        "zustimm*",
        "stimme zu",
        "einverstanden",
        "akzeptier*",
        "annehmen",
        "einwillig*",
        // fr
        "accepte",
        "accepter",
        "acceptez",
        "consen*", // consentir, consentement, consenso (it), consentimento (pt)
        "d accord",
        // es
        "acept*", // aceptar, acepto
        "de acuerdo",
        // pt
        "aceit*", // aceitar, aceito
        "concord*",
        "de acordo",
        // it
        "accett*", // accetta, accetto
        "acconsent*",
        "d accordo",
        // nl
        "akkoord",
        "accepteer*",
        "accepteren",
        "toestemming",
        "instemmen",
    ],
    not_phrases: &["accepted payment methods", "we accept"],
};

/// Signing in as someone, OAuth grants.
pub const AUTHORIZE: KeywordRule = KeywordRule {
    id: "authorize",
    label: "sign-in/authorize",
    risk: RiskLevel::High,
    keywords: &[
        // en
        "authori*", // authorize, authorise, authorization
        "allow",
        "allow access",
        "grant",
        "grant access",
        "sign in as",
        "log in as",
        "login as",
        "continue as",
        "sign in with",
        "log in with",
        "login with",
        "sign up with",
        "continue with",
        "impersonate",
        // de
        "autorisier*",
        "zulassen",
        "erlaub*",
        "zugriff gewähren",
        "anmelden als",
        "weiter als",
        "fortfahren als",
        "anmelden mit",
        "genehmig*",
        // fr
        "autoris*", // autoriser, autorisation, autoriseren (nl)
        "permettre",
        "accorder",
        "en tant que",
        "se connecter avec",
        "continuer avec",
        // es
        "autoriz*", // autorizar (es, pt), autorizza (it)
        "permit*",  // permitir, permit
        "conceder acceso",
        "sesión como",
        "continuar como",
        "iniciar sesión con",
        "continuar con",
        // pt
        "conceder acesso",
        "entrar como",
        "entrar com",
        "continuar com",
        // it
        "consenti",
        "concedi",
        "accedi come",
        "continua come",
        "accedi con",
        "continua con",
        // nl
        "toestaan",
        "sta toe",
        "toegang verlenen",
        "inloggen als",
        "doorgaan als",
        "inloggen met",
        "doorgaan met",
    ],
    not_phrases: &[
        // Refusals and guest checkout are not grants.
        "don t allow",
        "do not allow",
        "nicht zulassen",
        "nicht erlauben",
        "ne pas autoriser",
        "no permitir",
        "não permitir",
        "non consentire",
        "non autorizzare",
        "niet toestaan",
        "continue as guest",
        "continue as a guest",
        "weiter als gast",
        "continuar como invitado",
        "continuar como convidado",
        "continua come ospite",
        "doorgaan als gast",
    ],
};

/// Security settings that are dangerous on their own (revoking, signing
/// out everywhere). Changing a password or 2FA is matched by
/// [`SECURITY_VERBS`] × [`SECURITY_OBJECTS`].
pub const SECURITY: KeywordRule = KeywordRule {
    id: "security",
    label: "security settings",
    risk: RiskLevel::High,
    keywords: &[
        "revok*",  // revoke, revoked
        "revoc*",  // revocar (es), revoca (it)
        "revog*",  // revogar (pt)
        "revoqu*", // révoquer (fr)
        "widerruf*",
        "intrek*", // intrekken (nl)
        "sign out of all",
        "sign out everywhere",
        "log out everywhere",
        "log out of all",
        "transfer ownership",
        "make admin",
        "make owner",
        "überall abmelden",
        "déconnecter partout",
        "cerrar todas las sesiones",
        "sair de todas",
        "esci da tutti",
        "overal uitloggen",
    ],
    not_phrases: &[],
};

/// Security verbs (change, reset, disable…) that are high together with a
/// [`SECURITY_OBJECTS`] word in the same name.
pub const SECURITY_VERBS: &[&str] = &[
    "change",
    "update",
    "reset",
    "disable",
    "turn off",
    "remove",
    "set",
    "edit",
    "regenerate",
    "generate",
    "create",
    "new",
    "ändern",
    "ändere",
    "zurücksetzen",
    "deaktivieren",
    "ausschalten",
    "festlegen",
    "erstellen",
    "bearbeiten",
    "neues",
    "changer",
    "modifier",
    "réinitialiser",
    "désactiver",
    "définir",
    "créer",
    "générer",
    "nouveau",
    "cambiar",
    "restablecer",
    "desactivar",
    "establecer",
    "crear",
    "generar",
    "editar",
    "nueva",
    "alterar",
    "mudar",
    "redefinir",
    "desativar",
    // definir (pt): same as définir (fr)
    "criar",
    "gerar",
    "nova",
    "cambia",
    "modifica",
    "reimposta",
    "disattiva",
    "imposta",
    "crea",
    "genera",
    "nuova",
    "wijzig*",
    "herstel*",
    "resetten",
    "uitschakelen",
    "schakel uit",
    "instellen",
    "aanmaken",
    "genereren",
    "nieuw",
];

/// What [`SECURITY_VERBS`] act on.
pub const SECURITY_OBJECTS: &[&str] = &[
    "password",
    "passwort",
    "kennwort",
    "mot de passe",
    "contraseña",
    "senha",
    "wachtwoord",
    "2fa",
    "mfa",
    "two factor",
    "2 step",
    "two step",
    "zwei faktor",
    "deux facteurs",
    "double authentification",
    "dos factores",
    "dois fatores",
    "due fattori",
    "twee factor*",
    "tweestapsverificatie",
    "authenticator",
    "security key",
    "passkey",
    "recovery code*",
    "backup code*",
    "api key",
    "access token",
    "token",
];

/// Words that, in a dialog or section whose label matches a high rule, make
/// a button the confirmation of that rule ("Delete account?" → "Yes").
pub const AFFIRMATIVE: &[&str] = &[
    "yes",
    "ok",
    "okay",
    "continue",
    "proceed",
    "next",
    "done",
    "apply",
    "i m sure",
    "sure",
    "go",
    "ja",
    "weiter",
    "fortfahren",
    "fertig",
    "oui",
    "continuer",
    "suivant",
    "terminer",
    "si",
    // "sí" folds to "si" above
    "continuar",
    "siguiente",
    "sim",
    "próximo",
    "seguinte",
    "continua",
    "avanti",
    "procedi",
    "doorgaan",
    "volgende",
    "verder",
];

/// Whole names that dismiss: never raised by their context.
pub const DISMISS: &[&str] = &[
    "cancel",
    "no",
    "close",
    "back",
    "keep",
    "not now",
    "abbrechen",
    "nein",
    "schließen",
    "zurück",
    "annuler",
    "non",
    "fermer",
    "retour",
    "cancelar",
    "cerrar",
    "volver",
    "não",
    "fechar",
    "voltar",
    "annulla",
    "chiudi",
    "indietro",
    "annuleren",
    "nee",
    "sluiten",
    "terug",
];

/// Checkbox labels that make a checkbox a consent checkbox.
pub const TERMS_WORDS: &[&str] = &[
    "terms",
    "conditions",
    "privacy",
    "policy",
    "gdpr",
    "agb",
    "nutzungsbedingungen",
    "datenschutz*",
    "cgu",
    "cgv",
    "conditions générales",
    "confidentialité",
    "términos",
    "condiciones",
    "privacidad",
    "termos",
    "condições",
    "privacidade",
    "termini",
    "condizioni",
    "informativa",
    "voorwaarden",
    "privacyverklaring",
    "privacybeleid",
];

/// Words in a context label, or a role, that say "this is a search UI".
pub const SEARCH_CONTEXT: &[&str] = &[
    "search",
    "search results",
    "results",
    "suche",
    "suchen",
    "suchergebnisse",
    "ergebnisse",
    "recherche",
    "rechercher",
    "résultats",
    "búsqueda",
    "buscar",
    "resultados",
    "pesquisa",
    "pesquisar",
    "ricerca",
    "cerca",
    "risultati",
    "zoeken",
    "zoekresultaten",
    "resultaten",
];

/// A look-alike: a keyword match that, with these other words or in this
/// setting, means something harmless. Each entry is a decision recorded in
/// `fixtures/risk/controls.tsv`.
pub struct LookAlike {
    pub rule: &'static str,
    /// The name must also contain one of these (empty: no condition).
    pub with_words: &'static [&'static str],
    /// …and none of these (what makes the object worth keeping: "search
    /// history", "saved search").
    pub unless_words: &'static [&'static str],
    /// Only inside a search UI ([`SEARCH_CONTEXT`] label, `role=search`…).
    pub needs_search_context: bool,
    /// Only when the element belongs to a search form (`form_is_search`).
    pub needs_search_form: bool,
    pub risk: RiskLevel,
    pub why: &'static str,
}

pub const LOOK_ALIKES: &[LookAlike] = &[
    LookAlike {
        rule: "destructive",
        with_words: &[
            "filter",
            "filters",
            "filtre",
            "filtres",
            "filtro",
            "filtros",
            "filtri",
            "search term",
            "suchbegriff",
            // The search itself ("Clear search", "清除搜索"): clearing the box
            // or a refinement of the current search.
            "search",
            "query",
            "suche",
            "búsqueda",
            "pesquisa",
            "ricerca",
            "zoekopdracht",
            "sökning",
            "filtr",  // pl, cs
            "filtry", // pl, cs
            "wyszukiwanie",
            "filtre*", // tr: filtreyi, filtreler
            "arama*",  // tr: aramayı
            "фильтр*", // ru
            "фільтр*", // uk
            "поиск*",  // ru
            "пошук*",  // uk
            "hledání",
            "bộ lọc",   // vi
            "tìm kiếm", // vi
            "pencarian",
            "フィルター",
            "フィルタ",
            "絞り込み",
            "検索条件",
            "필터",
            "검색어",
            "筛选",
            "篩選",
            "过滤",
            "過濾",
            "搜索",
            "搜尋",
            "*فلتر", // ar: الفلتر
            "عامل التصفية",
            "فیلتر",
            "ตัวกรอง",
        ],
        unless_words: SEARCH_KEEP_WORDS,
        needs_search_context: true,
        needs_search_form: false,
        risk: RiskLevel::Low,
        why: "removes a search filter, not data",
    },
    LookAlike {
        rule: "destructive",
        with_words: &[
            "cart",
            "basket",
            "bag",
            "warenkorb",
            "panier",
            "carrito",
            "cesta",
            "carrinho",
            "cesto",
            "carrello",
            "winkelwagen",
            "winkelmand",
            "wishlist",
            "wunschliste",
            "varukorg*", // sv
            "kundvagn*", // sv
            "koszyk*",   // pl (kosz alone is the trash)
            "sepet*",    // tr
            "košík*",    // cs (koš alone is the trash)
            "giỏ hàng",  // vi
            "keranjang", // id
            "カート",
            "買い物かご",
            "장바구니",
            "购物车",
            "購物車",
            "السلة",      // ar
            "سلة التسوق", // ar
            "عربة التسوق",
            "سبد",   // fa
            "ตะกร้า", // th
            "รถเข็น", // th
        ],
        unless_words: WEIGHTY_OBJECTS,
        needs_search_context: false,
        needs_search_form: false,
        risk: RiskLevel::Medium,
        why: "changes the cart, no money moves",
    },
    LookAlike {
        rule: "destructive",
        with_words: &[
            "from view",
            "from this view",
            "from the view",
            "from feed",
            "from my feed",
            "from your feed",
            "aus der ansicht",
            "de la vue",
            "de la vista",
            "da visualização",
            "dalla vista",
            "uit weergave",
            "z widoku",
            "из вида",
            "表示から",
            "피드에서",
            "从视图",
        ],
        unless_words: WEIGHTY_OBJECTS,
        needs_search_context: false,
        needs_search_form: false,
        risk: RiskLevel::Low,
        why: "hides an item from a view or feed; nothing is deleted",
    },
    LookAlike {
        rule: "send",
        with_words: &[
            // Not "review"/"avis"/"отзыв"/"opinia": a review is published.
            "feedback", // en, de, nl, it, sv, id
            "rückmeldung",
            "geri bildirim",
            "zpětnou vazbu",
            "góp ý",
            "masukan",
            "フィードバック",
            "ご意見",
            "피드백",
            "反馈",
            "意見回饋",
            "回饋",
            "ملاحظات",
            "بازخورد",
        ],
        unless_words: &[],
        needs_search_context: false,
        needs_search_form: false,
        risk: RiskLevel::Medium,
        why: "opens or sends feedback to the site itself (a feedback form's submit still asks)",
    },
    LookAlike {
        rule: "send",
        with_words: &[],
        unless_words: &[],
        needs_search_context: false,
        needs_search_form: true,
        risk: RiskLevel::Low,
        why: "submits a site search",
    },
];

/// Objects that keep a destructive name high even when a look-alike's
/// harmless words appear too: a hostile page cannot lower "Delete account"
/// by labelling it "Delete account from view" or "Remove account from cart".
pub const WEIGHTY_OBJECTS: &[&str] = &[
    "account",
    "accounts",
    "profile",
    "workspace",
    "organization",
    "organisation",
    "team",
    "project",
    "repository",
    "everything",
    "all",
    "permanently",
    "forever",
    "data",
    "konto",
    "profil",
    "endgültig",
    "dauerhaft",
    "compte",
    "définitivement",
    "cuenta",
    "perfil",
    "conta",
    "profilo",
    "profiel",
    "аккаунт*",
    "учетн*",
    "профил*",
    "акаунт*",
    "обліков*",
    "hesab*",
    "tài khoản",
    "akun",
    "účet",
    "アカウント",
    "账户",
    "帳戶",
    "账号",
    "帳號",
    "계정",
    "حساب",
];

/// Words that make a search object worth keeping: a look-alike on search
/// words does not apply to "Delete search history" or "Remove saved search".
pub const SEARCH_KEEP_WORDS: &[&str] = &[
    "history",
    "saved",
    "verlauf",
    "gespeichert*",
    "historique",
    "enregistr*",
    "historial",
    "guardad*",
    "histórico",
    "salv*", // salva, salvas (pt, it)
    "cronologia",
    "geschiedenis",
    "opgeslagen",
    "historik",
    "sparad*",
    "historia", // pl
    "zapisan*",
    "geçmiş*",
    "kaydedil*",
    "истори*",
    "сохранен*",
    "історі*",
    "збережен*",
    "historie",
    "uložen*",
    "lịch sử",
    "đã lưu",
    "riwayat",
    "tersimpan",
    "履歴",
    "保存",
    "기록",
    "저장",
    "历史",
    "歷史",
    "记录",
    "記錄",
    "紀錄",
    "سجل",
    "المحفوظ*",
    "تاریخچه",
    "ذخیره",
    "ประวัติ",
];

/// URL path (and host label) words of payment pages.
pub const PAYMENT_PATHS: &[&str] = &[
    "checkout",
    "payment",
    "payments",
    "pay",
    "billing",
    "cart",
    "basket",
    "purchase",
    "paypal",
    "klarna",
    "kasse",
    "warenkorb",
    "bezahlung",
    "zahlung",
    "panier",
    "paiement",
    "carrito",
    "pago",
    "pagos",
    "carrinho",
    "pagamento",
    "pagamentos",
    "carrello",
    "cassa",
    "winkelwagen",
    "winkelmand",
    "betalen",
    "betaling",
    "afrekenen",
];

/// URL path (and host label) words of account and security pages.
pub const ACCOUNT_PATHS: &[&str] = &[
    "account",
    "accounts",
    "security",
    "password",
    "passwords",
    "2fa",
    "mfa",
    "two factor",
    "delete",
    "oauth",
    "oauth2",
    "authorize",
    "consent",
    "konto",
    "sicherheit",
    "passwort",
    "compte",
    "securite",
    "cuenta",
    "seguridad",
    "conta",
    "seguranca",
    "sicurezza",
    "beveiliging",
    "wachtwoord",
];

/// URL path words that act on a plain GET (one-click unsubscribe links).
pub const ACTION_PATHS: &[&str] = &[
    "delete",
    "remove",
    "unsubscribe",
    "deactivate",
    "destroy",
    "cancel",
    "confirm",
    "approve",
    "abmelden",
    "desabonner",
    "desinscription",
    "baja",
    "descadastrar",
    "disiscrizione",
    "uitschrijven",
];

/// Query parameters whose value says what a URL does when loaded
/// (`?action=delete`, `?do=remove`, Rails' `_method=delete`): their values
/// go through [`ACTION_PATHS`] like path segments.
pub const ACTION_QUERY_KEYS: &[&str] =
    &["action", "do", "op", "cmd", "command", "task", "mode", "method", "_method", "intent", "act"];

/// What a person reads from an icon on a control that shows no text: words
/// found in the icon's hints (class names, `<svg><title>`, `<use href>`
/// fragment, `alt`, `title`) or an emoji, and the word the rules then see.
/// Used by [`icon_label`]; the content script gathers the hints.
pub const ICON_LABELS: &[(&str, &str)] = &[
    ("trash", "delete"),
    ("trashcan", "delete"),
    ("trash can", "delete"),
    ("bin", "delete"),
    ("wastebasket", "delete"),
    ("garbage", "delete"),
    ("delete", "delete"),
    ("remove", "remove"),
    ("\u{1F5D1}", "delete"), // 🗑 wastebasket
    ("\u{1F4B3}", "pay"),    // 💳 credit card
    ("credit card", "pay"),
];

/// The label a person reads from an icon, from its hints (see
/// [`ICON_LABELS`]); `None` when no hint is a known icon.
pub fn icon_label(hints: &str) -> Option<&'static str> {
    let ws = normalize(hints);
    ICON_LABELS.iter().find_map(|(hint, label)| {
        let hw = normalize(hint);
        let found = if hw.is_empty() { hints.contains(hint) } else { ws.windows(hw.len()).any(|w| w == hw.as_slice()) };
        found.then_some(*label)
    })
}

/// Roles whose names are column or section titles: clicking sorts or
/// toggles a view, so name keywords there are not actions.
pub(super) const TITLE_ROLES: &[&str] = &["columnheader", "rowheader", "heading"];

pub(super) const CHECKBOX_ROLES: &[&str] = &["checkbox", "switch", "menuitemcheckbox"];

pub(super) const TEXT_ROLES: &[&str] = &["textbox", "searchbox", "combobox"];

pub(super) const NAV_KEYS: &[&str] = &[
    "tab",
    "escape",
    "esc",
    "arrowup",
    "arrowdown",
    "arrowleft",
    "arrowright",
    "pageup",
    "pagedown",
    "home",
    "end",
    "shift",
    "control",
    "alt",
    "meta",
];

pub(super) const KEYWORD_RULES: &[&KeywordRule] = &[&DESTRUCTIVE, &PAYMENT, &SEND, &CONSENT, &AUTHORIZE, &SECURITY];

/// The keywords of one language, list by list. The rule constants above
/// hold the first seven languages (en de fr es pt it nl); every language
/// added since is one `Language` in [`LANGUAGES`], merged into the same
/// rules when they are compiled. A word two languages share is listed once,
/// in the first of them (the other says so in a comment).
pub struct Language {
    /// BCP 47 tag, as in the `lang` column of `fixtures/risk/controls.tsv`
    /// (Chinese by script: `zh-Hans`, `zh-Hant`).
    pub code: &'static str,
    pub destructive: &'static [&'static str],
    pub payment: &'static [&'static str],
    pub send: &'static [&'static str],
    pub consent: &'static [&'static str],
    pub authorize: &'static [&'static str],
    pub security: &'static [&'static str],
    /// `(rule id, phrase)`: not-phrases of the rule.
    pub not_phrases: &'static [(&'static str, &'static str)],
    pub security_verbs: &'static [&'static str],
    pub security_objects: &'static [&'static str],
    pub affirmative: &'static [&'static str],
    pub dismiss: &'static [&'static str],
    pub terms: &'static [&'static str],
    pub search_context: &'static [&'static str],
    pub payment_paths: &'static [&'static str],
    pub account_paths: &'static [&'static str],
    pub action_paths: &'static [&'static str],
}

impl Language {
    pub(super) const EMPTY: Language = Language {
        code: "",
        destructive: &[],
        payment: &[],
        send: &[],
        consent: &[],
        authorize: &[],
        security: &[],
        not_phrases: &[],
        security_verbs: &[],
        security_objects: &[],
        affirmative: &[],
        dismiss: &[],
        terms: &[],
        search_context: &[],
        payment_paths: &[],
        account_paths: &[],
        action_paths: &[],
    };

    /// This language's keywords for the rule `id`.
    pub(super) fn keywords(&self, id: &str) -> &'static [&'static str] {
        match id {
            "destructive" => self.destructive,
            "payment" => self.payment,
            "send" => self.send,
            "consent" => self.consent,
            "authorize" => self.authorize,
            "security" => self.security,
            _ => &[],
        }
    }
}
