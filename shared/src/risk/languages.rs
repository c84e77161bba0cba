//! The keyword lists of the languages added after the first seven, one
//! [`Language`] each (see "Languages" in the module docs of
//! [`crate::risk`]). Every keyword here has a row in
//! `fixtures/risk/controls.tsv` in its language (a unit test checks that
//! each one is matched by some row).
//!
//! Writing them: the wordings real sites put on their buttons (imperative
//! and infinitive, the polite forms), not dictionary entries. Words are
//! matched after [`crate::risk::normalize`]: case, diacritics, Arabic letter
//! variants and look-alike letters fold, so write them as a person reads
//! them. In Han, Kana, Hangul and Thai a keyword of two or more characters
//! matches inside a word (there are no spaces to find), so those keywords
//! are the shortest unambiguous stems (削除, 결제, ชำระเงิน) and their
//! harmless compounds are not-phrases (注文履歴, 결제 수단). In Korean a
//! phrase written with a space (구독 취소) also needs its unspaced spelling
//! (구독취소); both are listed.

use super::Language;

/// Languages merged into the rules, in the order of the `lang` column's
/// list in the table test.
pub const LANGUAGES: &[Language] = &[JA, RU, PL, TR, FA, ZH_HANS, ZH_HANT, VI, ID, CS, KO, UK, AR, SV, TH, NL_MORE];

const JA: Language = Language {
    code: "ja",
    destructive: &[
        "削除",         // 削除, 削除する, アカウントを削除
        "消去",         // erase
        "取り除く",     // remove
        "退会",         // leave the service (close the account)
        "解約",         // end a contract or subscription
        "登録解除",     // unregister, unsubscribe
        "購読解除",     // unsubscribe
        "配信停止",     // stop mailings
        "無効化",       // deactivate
        "無効にする",   // disable
        "ゴミ箱に移動", // move to trash
        "ゴミ箱を空",   // empty the trash
        "アンインストール",
        "破棄",             // discard
        "注文をキャンセル", // cancel an order (キャンセル alone is the dismiss button)
        "予約をキャンセル",
    ],
    payment: &[
        "購入",       // 購入, 購入する, 今すぐ購入, 購入手続きへ
        "買う",       // buy
        "支払う",     // pay
        "支払い",     // お支払い (payment)
        "決済",       // settle (pay)
        "注文",       // 注文する, ご注文
        "注文を確定", // place the order
        "レジに進む", // go to checkout
        "送金",       // send money
        "振込",       // bank transfer
        "振り込む",
        "寄付",     // donate
        "購読する", // subscribe
        "申し込む", // apply, sign up for a paid plan
        "予約",     // book, reserve
        "レンタル", // rent
        "確定する", // finalise (確定 alone is Chinese "OK")
    ],
    send: &[
        "送信", // send, submit
        "送る",
        "投稿", // post
        "公開", // publish
        "返信", // reply (全員に返信: reply all)
        "招待", // invite
        "共有", // share
        "シェア",
        "コメントする",
        "応募", // apply (jobs)
        "提出", // submit
        "転送", // forward
        "ツイート",
    ],
    consent: &[
        "同意",       // 同意する, 同意して続行
        "承諾",       // consent
        "受け入れる", // accept (すべて受け入れる)
        "すべて許可", // allow all (cookies)
    ],
    authorize: &[
        "許可",           // allow (アクセスを許可)
        "承認",           // approve, authorize
        "認可",           // authorization
        "としてログイン", // log in as
        "として続行",     // continue as
        "でログイン",     // log in with
        "で続行",         // continue with
    ],
    security: &[
        "アクセスを取り消", // revoke access
        "失効",             // revoke (a token)
        "すべてのデバイスからログアウト",
    ],
    not_phrases: &[
        ("payment", "購入履歴"),
        ("payment", "注文履歴"),
        ("payment", "注文番号"),
        ("payment", "注文状況"),
        ("payment", "支払い方法"),
        ("send", "送信済み"),
        ("send", "送信者"),
        ("send", "公開日"),
        ("consent", "同意しない"),
        ("authorize", "許可しない"),
        ("authorize", "ゲストとして続行"),
    ],
    security_verbs: &["変更", "リセット", "再設定", "無効", "オフ", "作成", "設定", "再生成", "新しい"],
    security_objects: &[
        "パスワード",
        "二段階認証",
        "2段階認証",
        "二要素認証",
        "認証アプリ",
        "パスキー",
        "セキュリティキー",
        "トークン",
    ],
    affirmative: &["はい", "続行", "次へ", "続ける", "完了"],
    dismiss: &["キャンセル", "いいえ", "閉じる", "戻る"],
    terms: &["利用規約", "規約", "プライバシー", "個人情報"],
    search_context: &["検索", "検索結果"],
    ..Language::EMPTY
};

const RU: Language = Language {
    code: "ru",
    destructive: &[
        "удалить",
        "удалите",
        "удаление",
        "удалить аккаунт",
        "стереть",
        "очистить историю",
        "закрыть аккаунт",
        "закрыть счёт",
        "деактивировать",
        "отменить подписку",
        "отписаться",
        "отменить заказ",
        "отменить бронирование",
        "переместить в корзину", // the trash, in a file manager
        "очистить корзину",      // both the trash and the cart: asks
    ],
    payment: &[
        "оплатить",
        "оплатите",
        "оплата",
        "купить",
        "купить сейчас",
        "заказать",
        "оформить заказ",
        "подтвердить заказ",
        "перейти к оплате",
        "перевести деньги", // not перевести alone: "translate"
        "отправить деньги",
        "пожертвовать",
        "подписаться", // subscribe (also "follow": asking is fine)
        "забронировать",
        "арендовать",
        "подтвердить",
        "подтверждаю",
        "оформить", // оформить подписку, оформить кредит
    ],
    send: &[
        "отправить",
        "отправьте",
        "опубликовать",
        "ответить",
        "ответить всем",
        "пригласить",
        "поделиться",
        "комментировать",
        "прокомментировать",
        "откликнуться", // apply to a job
        "переслать",    // forward
    ],
    consent: &[
        "согласен",
        "согласна",
        "я согласен",
        "принять",
        "принимаю",
        "принять все",
        "даю согласие",
        "соглашаюсь",
    ],
    authorize: &[
        "авторизовать",
        "разрешить",
        "разрешить доступ",
        "предоставить доступ",
        "войти как",
        "продолжить как",
        "войти через",
        "войти с помощью",
        "продолжить с",
    ],
    security: &["отозвать", "выйти на всех устройствах", "выйти со всех устройств", "завершить все сеансы"],
    not_phrases: &[("authorize", "не разрешать"), ("authorize", "продолжить как гость"), ("consent", "не принимать")],
    security_verbs: &["изменить", "сменить", "сбросить", "отключить", "создать", "установить", "задать", "новый"],
    security_objects: &["пароль", "двухфакторн*", "двухэтапн*"], // пароль: also uk
    affirmative: &["да", "продолжить", "далее", "готово"],       // готово: also uk
    dismiss: &["отмена", "отменить", "нет", "закрыть", "назад"], // назад: also uk
    terms: &["условия", "конфиденциальн*", "соглашени*"],
    search_context: &["поиск", "найти", "результаты поиска", "результаты"],
    payment_paths: &["oplata", "korzina", "zakaz"],
    account_paths: &["akkaunt"],
    ..Language::EMPTY
};

const UK: Language = Language {
    code: "uk",
    destructive: &[
        "видалити",
        "видаліть",
        "видалення",
        "видалити обліковий запис",
        "стерти",
        "закрити обліковий запис",
        "деактивувати",
        "скасувати підписку",
        "відписатися",
        "скасувати замовлення",
    ],
    payment: &[
        "оплатити",
        "сплатити",
        "купити",
        "купити зараз",
        "замовити",
        "оформити замовлення",
        "підтвердити замовлення",
        "перейти до оплати",
        "переказати", // transfer money
        "задонатити",
        "пожертвувати",
        "підписатися",
        "забронювати",
        "орендувати",
        "підтвердити",
    ],
    send: &[
        "надіслати",
        "відправити",
        "опублікувати",
        "відповісти",
        "відповісти всім",
        "запросити",
        "поділитися",
        "коментувати",
        "прокоментувати",
        "переслати",
        "подати заявку",
        "відгукнутися",
    ],
    consent: &["погоджуюсь", "погоджуюся", "згоден", "згодна", "прийняти", "приймаю", "прийняти все", "даю згоду"],
    authorize: &[
        "авторизувати",
        "дозволити",
        "надати доступ",
        "увійти як",
        "продовжити як",
        "увійти через",
        "увійти за допомогою",
        "продовжити з",
    ],
    security: &["відкликати", "вийти з усіх пристроїв", "завершити всі сеанси"],
    not_phrases: &[("authorize", "не дозволяти"), ("authorize", "продовжити як гість")],
    security_verbs: &["змінити", "скинути", "вимкнути", "створити", "встановити"],
    security_objects: &["двофакторн*"],       // пароль: listed under ru
    affirmative: &["продовжити", "далі"],     // так: listed under pl ("tak" folds alike); готово: ru
    dismiss: &["скасувати", "ні", "закрити"], // назад: ru
    terms: &["умови", "конфіденційн*"],
    search_context: &["пошук", "знайти", "результати пошуку", "результати"],
    ..Language::EMPTY
};

const PL: Language = Language {
    code: "pl",
    destructive: &[
        "usuń*", // usuń, usunąć, usunięcie
        "usuwam",
        "skasuj",
        "wymaż",
        "zamknij konto",
        "dezaktywuj",
        "anuluj subskrypcję",
        "zrezygnuj z",   // zrezygnuj z subskrypcji, z konta
        "wypisz się",    // unsubscribe
        "opróżnij kosz", // empty the trash
        "przenieś do kosza",
        "odinstaluj",
        "odrzuć", // discard
        "anuluj zamówienie",
    ],
    payment: &[
        "zapłać",
        "zapłać teraz",
        "płacę",
        "kup",
        "kup teraz",
        "kupuję",
        "zamów",
        "zamawiam",
        "zamawiam i płacę",
        "złóż zamówienie",
        "przejdź do kasy",
        "do kasy",
        "przelew",
        "przelej",
        "wpłać",
        "przekaż darowiznę",
        "wesprzyj",
        "subskrybuj",
        "zarezerwuj",
        "rezerwuj",
        "wypożycz",
        "potwierdź*", // potwierdź, potwierdzam, potwierdzenie
    ],
    send: &[
        "wyślij",
        "wysyłam",
        "opublikuj",
        "publikuj",
        "odpowiedz",
        "odpowiedz wszystkim",
        "zaproś",
        "udostępnij",
        "skomentuj",
        "prześlij",
        "aplikuj",
        "złóż wniosek",
        "zatwierdź",
    ],
    consent: &["zgadzam się", "akceptuj*", "zaakceptuj*", "wyrażam zgodę", "przyjmuję"],
    authorize: &[
        "autoryzuj",
        "zezwól",
        "zezwalaj",
        "pozwól",
        "przyznaj dostęp",
        "zaloguj jako",
        "kontynuuj jako",
        "zaloguj się przez",
        "zaloguj się z",
        "kontynuuj z",
    ],
    security: &["unieważnij", "cofnij dostęp", "wyloguj ze wszystkich", "wyloguj wszędzie"],
    not_phrases: &[("authorize", "nie zezwalaj"), ("authorize", "kontynuuj jako gość")],
    security_verbs: &["zmień", "resetuj", "zresetuj", "wyłącz", "ustaw", "utwórz", "wygeneruj", "nowe"],
    security_objects: &["hasł*", "dwuetapow*", "dwuskładnikow*"],
    affirmative: &["tak", "dalej", "kontynuuj", "gotowe"], // tak: also uk "так"
    dismiss: &["anuluj", "nie", "zamknij", "wstecz", "wróć"],
    terms: &["regulamin*", "prywatności", "warunki"],
    search_context: &["szukaj", "wyszukaj", "wyniki wyszukiwania", "wyniki"],
    payment_paths: &["koszyk", "kasa", "platnosc", "platnosci", "zamowienie"],
    account_paths: &["haslo", "bezpieczenstwo", "moje konto"],
    ..Language::EMPTY
};

const TR: Language = Language {
    code: "tr",
    destructive: &[
        "sil",
        "silin",
        "silmek", // not sil*: silah, silgi
        "hesabı sil",
        "kaldır",
        "hesabı kapat",
        "hesabımı kapat",
        "aboneliği iptal et",
        "aboneliğimi iptal et",
        "üyeliği iptal et",
        "siparişi iptal et",
        "abonelikten çık",
        "devre dışı bırak",
        "çöpü boşalt",
        "çöp kutusuna taşı",
        "yok et",
    ],
    payment: &[
        "öde",
        "şimdi öde",
        "ödeme yap",
        "ödemeyi tamamla",
        "satın al",
        "hemen al",
        "sipariş ver",
        "siparişi tamamla",
        "siparişi onayla",
        "alışverişi tamamla",
        "sepeti onayla",
        "kasaya git",
        "havale",
        "para gönder",
        "bağış yap",
        "abone ol",
        "rezervasyon yap",
        "kirala",
        "onayla",
    ],
    send: &[
        "gönder",
        "şimdi gönder",
        "yayınla",
        "paylaş",
        "yanıtla",
        "tümünü yanıtla",
        "cevapla",
        "davet et",
        "yorum yap",
        "başvur",
        "ilet",
    ],
    consent: &["kabul*", "onaylıyorum", "izin veriyorum", "onay veriyorum"],
    authorize: &[
        "yetkilendir",
        "izin ver",
        "erişim izni ver",
        "olarak giriş yap",
        "olarak devam et",
        "ile giriş yap",
        "ile devam et",
    ],
    security: &["erişimi iptal et", "tüm oturumları kapat", "tüm cihazlardan çıkış yap"],
    not_phrases: &[("authorize", "izin verme"), ("authorize", "misafir olarak devam et")],
    security_verbs: &["değiştir", "sıfırla", "kapat", "oluştur", "ayarla", "yeni", "güncelle"],
    security_objects: &["şifre*", "parola*", "iki adımlı", "iki faktörlü"],
    affirmative: &["evet", "tamam", "devam", "devam et", "ileri", "sonraki"],
    dismiss: &["iptal", "hayır", "kapat", "geri", "vazgeç"],
    terms: &["koşul*", "şartlar*", "gizlilik", "kvkk"],
    search_context: &["ara", "arama", "arama sonuçları", "sonuçlar"],
    payment_paths: &["odeme", "sepet"], // kasa: listed under pl
    account_paths: &["hesap", "hesabim", "guvenlik", "sifre"],
    ..Language::EMPTY
};

const AR: Language = Language {
    code: "ar",
    destructive: &[
        "*حذف", // حذف, الحذف; also fa
        "احذف",
        "حذف الحساب",
        "إزالة",
        "أزل",
        "امسح",
        "مسح",
        "إغلاق الحساب",
        "إلغاء الاشتراك",
        "إلغاء الطلب",
        "إلغاء الحجز",
        "تعطيل",
        "إلغاء التثبيت",
        "نقل إلى سلة المهملات",
        "إفراغ سلة المهملات",
    ],
    payment: &[
        "ادفع",
        "الدفع",
        "دفع",
        "اشتر",
        "اشتري",
        "شراء",
        "اطلب",
        "تأكيد الطلب",
        "إتمام الطلب",
        "إتمام الشراء",
        "تحويل",
        "تبرع",
        "اشترك",
        "احجز",
        "حجز",
        "استئجار",
        "تأكيد",
    ],
    send: &[
        "إرسال", // also fa
        "أرسل",
        "نشر",
        "انشر",
        "رد",
        "الرد",
        "رد على الكل",
        "دعوة",
        "ادعُ",
        "مشاركة",
        "شارك",
        "تعليق",
        "تقديم",
        "قدم",
        "غرد",
    ],
    consent: &["موافق", "أوافق", "قبول", "أقبل", "قبول الكل", "الموافقة"], // قبول: also fa
    authorize: &[
        "تفويض",
        "السماح",
        "اسمح",
        "منح الوصول",
        "تسجيل الدخول باسم",
        "المتابعة باسم",
        "متابعة باسم",
        "تسجيل الدخول باستخدام",
        "المتابعة باستخدام",
        "متابعة باستخدام",
    ],
    security: &["إلغاء الوصول", "إبطال", "تسجيل الخروج من جميع"],
    not_phrases: &[
        ("payment", "طرق الدفع"),
        ("payment", "تتبع الطلب"),
        ("authorize", "عدم السماح"),
        ("authorize", "لا تسمح"),
        ("authorize", "المتابعة كضيف"),
    ],
    security_verbs: &["تغيير", "إعادة تعيين", "إنشاء", "تعيين", "تعطيل"],
    security_objects: &["كلمة المرور", "كلمة مرور", "كلمة السر", "المصادقة الثنائية", "التحقق بخطوتين"],
    affirmative: &["نعم", "متابعة", "التالي", "استمرار", "تم"],
    dismiss: &["إلغاء", "لا", "إغلاق", "رجوع", "عودة"],
    terms: &["الشروط", "الأحكام", "الخصوصية"],
    search_context: &["بحث", "البحث", "نتائج البحث", "نتائج"],
    ..Language::EMPTY
};

const FA: Language = Language {
    code: "fa",
    // حذف, ارسال, قبول: listed under ar (the same words).
    destructive: &[
        "حذف حساب",
        "پاک کردن",
        "پاک\u{200C}کردن", // with the half-space, which joins the word
        "پاک کن",
        "بستن حساب",
        "غیرفعال کردن",
        "غیرفعال\u{200C}سازی",
        "لغو اشتراک",
        "لغو عضویت",
        "لغو سفارش",
        "انتقال به سطل زباله",
        "خالی کردن سطل زباله",
        "حذف نصب",
    ],
    payment: &[
        "پرداخت",
        "پرداخت کنید",
        "خرید",
        "ثبت سفارش",
        "تکمیل خرید",
        "نهایی کردن خرید",
        "انتقال وجه",
        "کارت به کارت",
        "اهدا",
        "کمک مالی",
        "رزرو",
        "تایید", // تأیید (hamza folds)
        "تسویه حساب",
    ],
    send: &[
        "بفرست",
        "فرستادن",
        "انتشار",
        "منتشر کردن",
        "منتشر کن",
        "پاسخ",
        "پاسخ به همه",
        "دعوت",
        "اشتراک گذاری",
        "اشتراک\u{200C}گذاری",
        "ثبت نظر",
    ],
    consent: &["موافقم", "موافقت", "قبول دارم", "می\u{200C}پذیرم", "می پذیرم", "پذیرفتن"],
    authorize: &[
        "مجوز دادن",
        "اجازه دادن",
        "اجازه بده",
        "اجازه",
        "دسترسی بدهید",
        "ورود با",
        "ادامه با",
        "ورود به عنوان",
        "ادامه به عنوان",
    ],
    security: &["لغو دسترسی", "خروج از همه"],
    not_phrases: &[
        ("payment", "سبد خرید"), // the cart: a look-alike word of its own
        ("payment", "روش پرداخت"),
        ("payment", "روش های پرداخت"),
        ("payment", "تاریخچه خرید"),
        ("authorize", "اجازه ندهید"),
    ],
    security_verbs: &["بازنشانی", "غیرفعال", "ایجاد", "تنظیم"], // تغییر: listed under ar
    security_objects: &["رمز عبور", "گذرواژه", "رمز", "دو مرحله*"],
    affirmative: &["بله", "ادامه", "بعدی"],
    dismiss: &["لغو", "خیر", "نه", "بستن", "بازگشت"],
    terms: &["شرایط", "قوانین", "حریم خصوصی"],
    search_context: &["جستجو", "جست\u{200C}وجو"], // نتایج: listed under ar
    ..Language::EMPTY
};

const ZH_HANS: Language = Language {
    code: "zh-Hans",
    destructive: &[
        "删除",
        "移除",
        "清除", // also zh-Hant
        "清空", // also zh-Hant
        "注销", // close an account (注销账号); also "log out": asking is fine
        "销户",
        "关闭账户",
        "关闭账号",
        "取消订阅",
        "退订",
        "取消订单",
        "取消预订",
        "停用", // also zh-Hant
        "卸载",
        "移至回收站",
        "移到回收站",
        "放入回收站",
        "丢弃",
    ],
    payment: &[
        "支付", // also zh-Hant
        "付款", // also zh-Hant
        "立即支付",
        "购买",
        "立即购买",
        "买",
        "下单",
        "提交订单",
        "确认", // like "confirm": high
        "结算",
        "结账",
        "转账",
        "汇款",
        "捐款", // also zh-Hant
        "捐赠",
        "订阅",
        "预订",
        "预约",
        "租用",
        "充值",
        "打赏",
    ],
    send: &[
        "发送",
        "发布",
        "发表",
        "提交", // also zh-Hant
        "回复",
        "邀请",
        "分享", // also zh-Hant
        "评论",
        "转发",
        "投递",
        "申请职位",
    ],
    consent: &["接受"], // also zh-Hant; 同意: listed under ja
    authorize: &["授权", "允许", "身份登录", "身份继续", "一键登录"],
    security: &["撤销", "吊销", "退出所有设备", "所有设备上退出"],
    not_phrases: &[
        ("payment", "支付方式"), // also zh-Hant
        ("payment", "付款方式"), // also zh-Hant
        ("payment", "购买记录"),
        ("send", "已发送"),
        ("send", "发布日期"),
        ("consent", "不同意"), // also zh-Hant
        ("consent", "不接受"), // also zh-Hant
        ("authorize", "不允许"),
    ],
    security_verbs: &["修改", "更改", "重置", "关闭", "创建", "设置", "生成", "新建"],
    security_objects: &["密码", "两步验证", "双重验证", "二次验证", "安全密钥", "通行密钥", "令牌"],
    affirmative: &["是", "确定", "好的", "继续", "下一步", "完成"], // also zh-Hant: 是 確定 下一步 完成
    dismiss: &["取消", "否", "关闭", "返回"],                       // also zh-Hant: 取消 否 返回
    terms: &["条款", "服务协议", "用户协议", "隐私"],
    search_context: &["搜索", "搜索结果", "结果"],
    ..Language::EMPTY
};

const ZH_HANT: Language = Language {
    code: "zh-Hant",
    destructive: &[
        "刪除",
        "註銷",
        "關閉帳戶",
        "關閉帳號",
        "取消訂閱",
        "退訂",
        "取消訂單",
        "取消預訂",
        "解除安裝",
        "移至垃圾桶",
        "丟到垃圾桶",
        "丟棄",
    ],
    payment: &[
        "立即付款",
        "購買",
        "立即購買",
        "買",
        "下單",
        "提交訂單",
        "送出訂單",
        "確認", // also ja
        "結帳",
        "結算",
        "轉帳",
        "匯款",
        "捐贈",
        "訂閱",
        "預訂",
        "預約",
        "儲值",
    ],
    send: &["發送", "傳送", "送出", "發布", "發佈", "發表", "回覆", "邀請", "評論", "留言", "轉寄", "轉發", "應徵"],
    consent: &["我同意"],
    authorize: &["授權", "允許", "身分登入", "身份登入"],
    security: &["撤銷", "登出所有裝置"],
    not_phrases: &[
        ("payment", "購買紀錄"),
        ("payment", "購買記錄"),
        ("send", "已傳送"),
        ("send", "已發送"),
        ("send", "發布日期"),
        ("authorize", "不允許"),
    ],
    security_verbs: &["變更", "重設", "關閉", "建立", "產生"], // 設定: listed under ja
    security_objects: &["密碼", "兩步驟驗證", "雙重驗證", "安全金鑰", "密鑰"],
    affirmative: &["確定", "繼續"],
    dismiss: &["關閉"],
    terms: &["條款", "隱私"],
    search_context: &["搜尋", "搜尋結果"],
    ..Language::EMPTY
};

const KO: Language = Language {
    code: "ko",
    destructive: &[
        "삭제", // 삭제, 삭제하기, 계정 삭제
        "지우기",
        "제거",
        "탈퇴", // leave the service (회원 탈퇴)
        "해지", // end a contract (구독 해지)
        "구독 취소",
        "구독취소",
        "주문 취소",
        "주문취소",
        "예약 취소",
        "예약취소",
        "수신 거부", // unsubscribe from mail
        "수신거부",
        "비활성화",
        "휴지통으로", // 휴지통으로 이동 (move to trash)
        "휴지통 비우기",
        "휴지통비우기",
        "버리기",
        "폐기",
    ],
    payment: &[
        "결제", // 결제, 결제하기
        "구매", // 구매하기, 바로 구매
        "주문", // 주문하기
        "송금",
        "이체",
        "기부",
        "후원",
        "구독하기",
        "예약하기",
        "대여",
        "충전", // top up
    ],
    send: &[
        "보내기",
        "전송",
        "게시",
        "등록", // 댓글 등록 (post a comment)
        "발행",
        "공개",
        "답장",
        "답글",
        "초대",
        "공유",
        "지원하기", // apply (jobs)
        "제출",
        "전달", // forward
    ],
    consent: &["동의", "수락"],
    // "Google로 로그인" splits at the script boundary; "카카오로"/"계정으로"
    // keep the particle inside the word.
    authorize: &["허용", "권한 부여", "로 로그인", "로 계속", "카카오로", "으로 로그인", "으로 계속"],
    security: &["철회", "액세스 취소", "모든 기기에서 로그아웃"],
    not_phrases: &[
        ("payment", "결제 수단"),
        ("payment", "결제수단"),
        ("payment", "결제 내역"),
        ("payment", "결제내역"),
        ("payment", "구매 내역"),
        ("payment", "구매내역"),
        ("payment", "주문 내역"),
        ("payment", "주문내역"),
        ("payment", "주문 조회"),
        ("send", "등록일"),
        ("consent", "동의하지"),
        ("consent", "동의 안 함"),
        ("authorize", "허용 안 함"),
        ("authorize", "허용하지"),
        ("authorize", "게스트로 계속"),
    ],
    security_verbs: &["변경", "재설정", "끄기", "생성", "설정", "새"],
    security_objects: &["비밀번호", "2단계 인증", "이중 인증", "보안 키", "패스키"],
    affirmative: &["예", "네", "확인", "계속", "다음", "완료"],
    dismiss: &["취소", "아니요", "닫기", "뒤로"],
    terms: &["약관", "개인정보"],
    search_context: &["검색", "검색 결과"],
    ..Language::EMPTY
};

const VI: Language = Language {
    code: "vi",
    destructive: &[
        "xóa", // xóa, xoá
        "xóa tài khoản",
        "gỡ bỏ", // not gỡ alone: it folds to "go"
        "gỡ cài đặt",
        "loại bỏ",
        "đóng tài khoản",
        "hủy đăng ký",
        "hủy gói",
        "hủy đơn hàng",
        "hủy đặt chỗ",
        "hủy đặt phòng",
        "vô hiệu hóa",
        "hủy kích hoạt",
        "chuyển vào thùng rác",
        "dọn sạch thùng rác",
    ],
    payment: &[
        "thanh toán",
        "mua", // mua, mua ngay (mùa "season" folds alike: asks)
        "mua hàng",
        "đặt hàng",
        "đặt mua",
        "chuyển tiền",
        "chuyển khoản",
        "quyên góp",
        "ủng hộ",
        "đặt phòng",
        "đặt vé",
        "đặt chỗ",
        "xác nhận",
    ],
    send: &[
        "gửi",
        "đăng bài",
        "đăng tin",
        "đăng bình luận",
        "xuất bản",
        "trả lời",
        "gửi lời mời", // not mời alone: it folds like mới ("new")
        "mời tham gia",
        "chia sẻ",
        "bình luận",
        "ứng tuyển",
        "nộp đơn",
        "chuyển tiếp",
    ],
    consent: &["đồng ý", "chấp nhận"],
    authorize: &[
        "ủy quyền",
        "cho phép",
        "cấp quyền",
        "đăng nhập với tư cách",
        "tiếp tục với tư cách",
        "đăng nhập bằng",
        "tiếp tục với",
    ],
    security: &["thu hồi", "đăng xuất khỏi tất cả"],
    not_phrases: &[
        ("authorize", "không cho phép"),
        ("authorize", "tiếp tục với tư cách khách"),
        ("consent", "không đồng ý"),
        ("payment", "phương thức thanh toán"),
    ],
    security_verbs: &["thay đổi", "đổi", "đặt lại", "tắt", "tạo", "thiết lập"],
    security_objects: &["mật khẩu", "hai yếu tố", "hai bước"],
    affirmative: &["có", "tiếp tục", "tiếp", "xong"],
    dismiss: &["hủy", "không", "đóng", "quay lại", "trở lại"],
    terms: &["điều khoản", "chính sách bảo mật", "quyền riêng tư"],
    search_context: &["tìm kiếm", "kết quả tìm kiếm", "kết quả"],
    payment_paths: &["thanh toan", "gio hang"],
    account_paths: &["tai khoan", "bao mat", "mat khau"],
    ..Language::EMPTY
};

const ID: Language = Language {
    code: "id",
    destructive: &[
        "hapus",
        "hapus akun",
        "menghapus",
        "buang",
        "tutup akun",
        "nonaktifkan",
        "batalkan langganan",
        "berhenti berlangganan",
        "batalkan pesanan",
        "batalkan pemesanan",
        "kosongkan sampah",
        "pindahkan ke sampah",
        "copot pemasangan",
    ],
    payment: &[
        "bayar",
        "bayar sekarang",
        "beli",
        "beli sekarang",
        "pesan sekarang", // not pesan alone: it is also "message"
        "buat pesanan",
        "pembayaran",
        "kirim uang",
        "berlangganan",
        "sewa",
        "konfirmasi",
    ],
    send: &[
        "kirim",
        "kirim sekarang",
        "terbitkan",
        "publikasikan",
        "balas",
        "balas semua",
        "undang",
        "bagikan",
        "komentari",
        "lamar",
        "ajukan",
        "teruskan",
        "posting",
    ],
    consent: &["setuju", "saya setuju", "terima", "terima semua", "menyetujui"],
    authorize: &[
        "otorisasi",
        "izinkan",
        "berikan akses",
        "masuk sebagai",
        "lanjutkan sebagai",
        "masuk dengan",
        "lanjutkan dengan",
    ],
    security: &["cabut akses", "keluar dari semua perangkat"],
    not_phrases: &[
        ("consent", "terima kasih"), // thank you
        ("consent", "tidak setuju"),
        ("payment", "metode pembayaran"),
        ("authorize", "jangan izinkan"),
        ("authorize", "lanjutkan sebagai tamu"),
    ],
    security_verbs: &["ubah", "ganti", "atur ulang", "matikan", "buat", "baru", "setel"],
    security_objects: &["kata sandi", "sandi", "dua faktor", "dua langkah"],
    affirmative: &["ya", "oke", "lanjut", "lanjutkan", "berikutnya", "selesai"],
    dismiss: &["batal", "tidak", "tutup", "kembali"],
    terms: &["syarat", "ketentuan", "privasi"],
    search_context: &["cari", "hasil pencarian", "hasil"],
    payment_paths: &["keranjang", "bayar", "pembayaran"],
    account_paths: &["akun", "keamanan"],
    ..Language::EMPTY
};

const CS: Language = Language {
    code: "cs",
    destructive: &[
        "smazat",
        "smaž",
        "smazat účet",
        "odstranit",
        "odstraňte",
        "vymazat",
        "zrušit účet",
        "zrušit předplatné",
        "zrušit objednávku",
        "zrušit rezervaci",
        "odhlásit odběr",
        "odhlásit se z odběru",
        "deaktivovat",
        "vysypat koš",
        "přesunout do koše",
        "odinstalovat",
        "zahodit",
    ],
    payment: &[
        "zaplatit",
        "zaplaťte",
        "platit",
        "koupit",
        "koupit nyní",
        "objednat",
        "objednávám",
        "dokončit objednávku",
        "odeslat objednávku",
        "závazně objednat",
        "k pokladně",
        "převést",
        "darovat",
        "přispět",
        "předplatit",
        "rezervovat",
        "pronajmout",
        "potvrdit",
    ],
    send: &[
        "odeslat",
        "odešlete",
        "poslat",
        "publikovat",
        "zveřejnit",
        "odpovědět",
        "odpovědět všem",
        "pozvat",
        "sdílet",
        "komentovat",
        "přeposlat",
        "podat žádost",
    ],
    consent: &["souhlas*", "přijmout", "přijmout vše", "akceptovat"],
    authorize: &[
        "autorizovat",
        "povolit",
        "udělit přístup",
        "přihlásit se jako",
        "pokračovat jako",
        "přihlásit se přes",
        "přihlásit se pomocí",
        "pokračovat s",
    ],
    security: &["odvolat", "odhlásit ze všech zařízení", "odhlásit všude"],
    not_phrases: &[("authorize", "nepovolit"), ("authorize", "pokračovat jako host")],
    security_verbs: &["změnit", "obnovit", "resetovat", "vypnout", "vytvořit", "nastavit", "nové"],
    security_objects: &["heslo", "dvoufázov*", "dvoufaktorov*"],
    affirmative: &["ano", "pokračovat", "další", "hotovo"],
    dismiss: &["zrušit", "ne", "zavřít", "zpět"],
    terms: &["podmín*", "osobních údajů"],
    search_context: &["hledat", "vyhledat", "výsledky vyhledávání", "výsledky"],
    payment_paths: &["pokladna", "kosik", "platba"],
    account_paths: &["ucet", "zabezpeceni"],
    ..Language::EMPTY
};

const SV: Language = Language {
    code: "sv",
    destructive: &[
        "radera*", // radera, raderar, radering
        "ta bort",
        "avsluta konto",
        "avsluta kontot",
        "avsluta prenumeration*",
        "avsluta abonnemang*",
        "säg upp",
        "avregistrera",
        "avaktivera",
        "inaktivera",
        "töm papperskorgen",
        "flytta till papperskorgen",
        "kasta",
        "avinstallera",
    ],
    payment: &[
        "betala",
        "betala nu",
        "köp",
        "köp nu",
        "köpa",
        "beställ",
        "lägg beställning",
        "slutför köp",
        "slutför köpet",
        "slutför beställning",
        "till kassan",
        "kassa",
        "genomför köp",
        "överför",
        "swisha",
        "donera",
        "prenumerera",
        "boka",
        "hyr",
        "bekräfta*",
    ],
    send: &[
        "skicka",
        "skicka in",
        "publicera",
        "svara",
        "svara alla",
        "bjud in",
        "dela",
        "posta",
        "kommentera",
        "lämna in",
        "ansök",
    ],
    consent: &["godkänn*", "acceptera*", "samtyck*", "jag håller med", "godta"],
    authorize: &["auktorisera", "tillåt", "ge åtkomst", "logga in som", "fortsätt som", "logga in med", "fortsätt med"],
    security: &["återkalla", "logga ut överallt", "logga ut från alla"],
    not_phrases: &[("authorize", "tillåt inte"), ("authorize", "fortsätt som gäst")],
    security_verbs: &["ändra", "byt", "återställ", "stäng av", "skapa", "ny", "nytt"],
    security_objects: &["lösenord*", "tvåfaktor*", "tvåstegsverifiering"],
    affirmative: &["fortsätt", "nästa", "klar"], // ja: listed under de
    dismiss: &["avbryt", "nej", "stäng", "tillbaka"],
    terms: &["villkor*", "*villkor", "*villkoren", "integritetspolicy", "personuppgift*"],
    search_context: &["sök", "sökresultat", "resultat"],
    payment_paths: &["kassan", "betalning", "varukorg"],
    account_paths: &["sakerhet", "losenord"],
    ..Language::EMPTY
};

const TH: Language = Language {
    code: "th",
    destructive: &["ลบ", "นำออก", "ยกเลิกการสมัคร", "ยกเลิกคำสั่งซื้อ", "ปิดบัญชี", "ปิดใช้งาน", "ถอนการติดตั้ง"],
    payment: &["ชำระเงิน", "จ่ายเงิน", "ซื้อ", "สั่งซื้อ", "โอนเงิน", "บริจาค", "สมัครสมาชิก", "จอง", "ยืนยัน"],
    send: &["ส่ง", "โพสต์", "เผยแพร่", "ตอบกลับ", "เชิญ", "แชร์", "แสดงความคิดเห็น", "สมัครงาน"],
    consent: &["ยอมรับ", "ยินยอม"],
    authorize: &["อนุญาต", "เข้าสู่ระบบด้วย", "ดำเนินการต่อในชื่อ"],
    security: &["เพิกถอน", "ออกจากระบบทุกอุปกรณ์"],
    not_phrases: &[
        ("payment", "ประวัติการสั่งซื้อ"),
        ("payment", "วิธีการชำระเงิน"),
        ("send", "จัดส่ง"), // shipping
        ("send", "ค่าส่ง"), // shipping cost
        ("authorize", "ไม่อนุญาต"),
        ("consent", "ไม่ยอมรับ"),
    ],
    security_verbs: &["เปลี่ยน", "รีเซ็ต", "ปิด", "สร้าง", "ตั้ง"],
    security_objects: &["รหัสผ่าน"],
    affirmative: &["ใช่", "ตกลง", "ดำเนินการต่อ", "ถัดไป"],
    dismiss: &["ยกเลิก", "ไม่", "ปิด", "กลับ"],
    terms: &["ข้อกำหนด", "เงื่อนไข", "ความเป็นส่วนตัว"],
    search_context: &["ค้นหา", "ผลการค้นหา"],
    ..Language::EMPTY
};

/// Dutch words the first lists missed (the Dutch section of the rule
/// constants is the rest).
const NL_MORE: Language = Language {
    code: "nl",
    destructive: &["opheffen", "rekening sluiten"],
    account_paths: &["rekening"],
    ..Language::EMPTY
};

// ---------------------------------------------------------------------------
// Languages as data
// ---------------------------------------------------------------------------

/// Languages kept as data, one table per language in `risk/lang/<code>.tsv`
/// (BCP 47 code; a code the constants above already have adds to that
/// language). Each table holds the language's keywords and its own test
/// cases, harmless look-alikes included; `cargo test -p shared risk::languages`
/// runs one table test per language.
///
/// A line is `kind<TAB>text[<TAB>note]`; `#` starts a comment. Kinds:
/// - a rule id (`destructive`, `payment`, `send`, `consent`, `authorize`,
///   `security`): a keyword of that rule (syntax of the rule constants:
///   `*` for inflections, see the module docs of [`crate::risk`]);
/// - `not <rule id>`: a not-phrase of that rule ("sort order");
/// - `verb`, `object`, `affirmative`, `dismiss`, `terms`, `search`,
///   `payment-path`, `account-path`, `action-path`: the other lists;
/// - `high`, `medium`, `low`: a case, a button of that name clicked on an
///   ordinary page, and the level it must get. The note of a `high` case
///   names what it is ([`CONCEPTS`]); a case below high whose note starts
///   with `look-alike:` is a harmless phrase that resembles a keyword.
pub const DATA: &[(&str, &str)] = &[
    // Cases (and a few additions) for the languages of the constants above.
    ("en", include_str!("lang/en.tsv")),
    ("de", include_str!("lang/de.tsv")),
    ("fr", include_str!("lang/fr.tsv")),
    ("es", include_str!("lang/es.tsv")),
    ("pt", include_str!("lang/pt.tsv")),
    ("it", include_str!("lang/it.tsv")),
    ("nl", include_str!("lang/nl.tsv")),
    ("ja", include_str!("lang/ja.tsv")),
    ("ko", include_str!("lang/ko.tsv")),
    ("zh-Hans", include_str!("lang/zh-Hans.tsv")),
    ("zh-Hant", include_str!("lang/zh-Hant.tsv")),
    ("ru", include_str!("lang/ru.tsv")),
    ("uk", include_str!("lang/uk.tsv")),
    ("pl", include_str!("lang/pl.tsv")),
    ("cs", include_str!("lang/cs.tsv")),
    ("sv", include_str!("lang/sv.tsv")),
    ("tr", include_str!("lang/tr.tsv")),
    ("ar", include_str!("lang/ar.tsv")),
    ("fa", include_str!("lang/fa.tsv")),
    ("vi", include_str!("lang/vi.tsv")),
    ("id", include_str!("lang/id.tsv")),
    ("th", include_str!("lang/th.tsv")),
    // Languages kept as data.
    ("bg", include_str!("lang/bg.tsv")),
    ("bn", include_str!("lang/bn.tsv")),
    ("ca", include_str!("lang/ca.tsv")),
    ("da", include_str!("lang/da.tsv")),
    ("el", include_str!("lang/el.tsv")),
    ("et", include_str!("lang/et.tsv")),
    ("fi", include_str!("lang/fi.tsv")),
    ("ga", include_str!("lang/ga.tsv")),
    ("he", include_str!("lang/he.tsv")),
    ("hi", include_str!("lang/hi.tsv")),
    ("hr", include_str!("lang/hr.tsv")),
    ("hu", include_str!("lang/hu.tsv")),
    ("lt", include_str!("lang/lt.tsv")),
    ("lv", include_str!("lang/lv.tsv")),
    ("ms", include_str!("lang/ms.tsv")),
    ("mt", include_str!("lang/mt.tsv")),
    ("nb", include_str!("lang/nb.tsv")),
    ("ro", include_str!("lang/ro.tsv")),
    ("sk", include_str!("lang/sk.tsv")),
    ("sl", include_str!("lang/sl.tsv")),
    ("sr", include_str!("lang/sr.tsv")),
    ("ur", include_str!("lang/ur.tsv")),
    ("more", include_str!("lang/more.tsv")),
];

/// What every table's `high` cases must cover between them: the acts a
/// person must approve, in every language.
#[cfg(test)]
const CONCEPTS: &[&str] =
    &["delete", "pay", "buy", "order", "send", "publish", "transfer", "consent", "subscribe", "sign", "confirm"];

/// Tables that only add words to languages covered elsewhere (not bound
/// to cover every concept).
#[cfg(test)]
const ADDITIONS: &[&str] = &["more"];

/// One case of a language table (read by its table test).
#[derive(Debug, Clone)]
#[cfg_attr(not(test), allow(dead_code))]
pub struct Case {
    pub line: usize,
    pub risk: super::RiskLevel,
    pub name: &'static str,
    pub note: &'static str,
}

/// A parsed language table.
#[cfg_attr(not(test), allow(dead_code))]
pub struct Table {
    pub language: Language,
    pub cases: Vec<Case>,
}

/// Every language merged into the rules: the constants, then the tables.
pub(super) fn all() -> impl Iterator<Item = &'static Language> {
    LANGUAGES.iter().chain(tables().iter().map(|t| &t.language))
}

/// The parsed tables (a line that does not parse is skipped here; the
/// table tests refuse it).
pub fn tables() -> &'static [Table] {
    static T: std::sync::OnceLock<Vec<Table>> = std::sync::OnceLock::new();
    T.get_or_init(|| DATA.iter().map(|(code, text)| parse(code, text).0).collect())
}

fn leak(v: Vec<&'static str>) -> &'static [&'static str] {
    if v.is_empty() { &[] } else { Box::leak(v.into_boxed_slice()) }
}

/// Parses one table; the errors name their line.
pub fn parse(code: &'static str, text: &'static str) -> (Table, Vec<String>) {
    use super::RiskLevel;
    let mut lists: std::collections::HashMap<&'static str, Vec<&'static str>> = Default::default();
    let mut nots: Vec<(&'static str, &'static str)> = Vec::new();
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    const RULES: [&str; 6] = ["destructive", "payment", "send", "consent", "authorize", "security"];
    const OTHER: [&str; 9] =
        ["verb", "object", "affirmative", "dismiss", "terms", "search", "payment-path", "account-path", "action-path"];
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let mut cols = line.split('\t');
        let kind = cols.next().unwrap_or("").trim();
        let value = cols.next().unwrap_or("").trim();
        let note = cols.next().unwrap_or("").trim();
        if value.is_empty() || cols.next().is_some() {
            errors.push(format!("{code}.tsv line {line_no}: expected kind<TAB>text[<TAB>note]: {line:?}"));
            continue;
        }
        let risk = match kind {
            "high" => Some(RiskLevel::High),
            "medium" => Some(RiskLevel::Medium),
            "low" => Some(RiskLevel::Low),
            _ => None,
        };
        if let Some(risk) = risk {
            cases.push(Case { line: line_no, risk, name: value, note });
        } else if let Some(rule) = kind.strip_prefix("not ").and_then(|r| RULES.iter().find(|k| **k == r)) {
            nots.push((rule, value));
        } else if let Some(k) = RULES.iter().chain(OTHER.iter()).find(|k| **k == kind) {
            lists.entry(k).or_default().push(value);
        } else {
            errors.push(format!("{code}.tsv line {line_no}: unknown kind {kind:?}"));
        }
    }
    let mut take = |k: &str| leak(lists.remove(k).unwrap_or_default());
    let language = Language {
        code,
        destructive: take("destructive"),
        payment: take("payment"),
        send: take("send"),
        consent: take("consent"),
        authorize: take("authorize"),
        security: take("security"),
        not_phrases: if nots.is_empty() { &[] } else { Box::leak(nots.into_boxed_slice()) },
        security_verbs: take("verb"),
        security_objects: take("object"),
        affirmative: take("affirmative"),
        dismiss: take("dismiss"),
        terms: take("terms"),
        search_context: take("search"),
        payment_paths: take("payment-path"),
        account_paths: take("account-path"),
        action_paths: take("action-path"),
    };
    (Table { language, cases }, errors)
}

#[cfg(test)]
mod tests {
    use super::super::{ActionKind, ElementFacts, RiskLevel, classify, compile, normalize};
    use super::*;

    /// The table test of one language: its file parses, every case gets its
    /// level, every keyword is matched by one of its `high` cases, the
    /// `high` cases cover every concept, and harmless look-alikes are there.
    fn table_test(code: &str) {
        let (code, text) = DATA.iter().copied().find(|(c, _)| *c == code).expect("a table for the language");
        let (table, errors) = parse(code, text);
        assert!(errors.is_empty(), "{errors:#?}");
        let mut failures = Vec::new();
        for case in &table.cases {
            let el = ElementFacts { role: "button".into(), name: case.name.into(), ..Default::default() };
            let got = classify(&ActionKind::Click, Some(&el), "https://www.example.test/app", None);
            if got.risk != case.risk {
                failures.push(format!(
                    "{code}.tsv line {}: {:?} expected {}, got {} {:?}",
                    case.line,
                    case.name,
                    case.risk.as_str(),
                    got.risk.as_str(),
                    got.reasons
                ));
            }
        }
        assert!(failures.is_empty(), "{} case(s) failed:\n{}", failures.len(), failures.join("\n"));
        let l = &table.language;
        let high: Vec<Vec<String>> =
            table.cases.iter().filter(|c| c.risk == RiskLevel::High).map(|c| normalize(c.name)).collect();
        let all: Vec<Vec<String>> = table.cases.iter().map(|c| normalize(c.name)).collect();
        let mut missing = Vec::new();
        let keyword_lists: [&[&'static str]; 6] =
            [l.destructive, l.payment, l.send, l.consent, l.authorize, l.security];
        for k in keyword_lists.iter().flat_map(|l| l.iter()) {
            let p = compile(k);
            assert!(
                !p.pats.is_empty() && p.pats.iter().all(|w| w.word.chars().count() >= 2 || p.pats.len() > 1),
                "{k:?}"
            );
            if !high.iter().any(|ws| p.in_words(ws)) {
                missing.push(*k);
            }
        }
        for (_, k) in l.not_phrases {
            if !all.iter().any(|ws| compile(k).in_words(ws)) {
                missing.push(*k);
            }
        }
        assert!(missing.is_empty(), "{code}: keywords and not-phrases without a case: {missing:?}");
        if !ADDITIONS.contains(&code) {
            let concepts: Vec<&str> = table
                .cases
                .iter()
                .filter(|c| c.risk == RiskLevel::High)
                .flat_map(|c| c.note.split(','))
                .map(str::trim)
                .collect();
            let absent: Vec<&&str> = CONCEPTS.iter().filter(|c| !concepts.contains(c)).collect();
            assert!(absent.is_empty(), "{code}: no high case for {absent:?}");
            let look_alikes =
                table.cases.iter().filter(|c| c.risk < RiskLevel::High && c.note.starts_with("look-alike:")).count();
            assert!(look_alikes >= 4, "{code}: only {look_alikes} harmless look-alike cases");
        }
    }

    crate::table_tests! {
        DATA;
        table_bg => "bg", table_bn => "bn", table_ca => "ca", table_da => "da", table_el => "el",
        table_et => "et", table_fi => "fi", table_ga => "ga", table_he => "he", table_hi => "hi",
        table_hr => "hr", table_hu => "hu", table_lt => "lt", table_lv => "lv", table_ms => "ms",
        table_mt => "mt", table_nb => "nb", table_ro => "ro", table_sk => "sk", table_sl => "sl",
        table_sr => "sr", table_ur => "ur", table_more => "more",
        table_en_cases => "en", table_de_cases => "de", table_fr_cases => "fr", table_es_cases => "es", table_pt_cases => "pt", table_it_cases => "it", table_nl_cases => "nl", table_ja_cases => "ja", table_ko_cases => "ko", table_zh_hans_cases => "zh-Hans", table_zh_hant_cases => "zh-Hant", table_ru_cases => "ru", table_uk_cases => "uk", table_pl_cases => "pl", table_cs_cases => "cs", table_sv_cases => "sv", table_tr_cases => "tr", table_ar_cases => "ar", table_fa_cases => "fa", table_vi_cases => "vi", table_id_cases => "id", table_th_cases => "th",
    }
}
