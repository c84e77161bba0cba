//! File names inside the exports folder (`HOME/exports/`) for the MCP
//! tools `api_learn` and `api_client`: an agent names a file, never a
//! path. Only the last component of what it gives is used, reduced to
//! `[A-Za-z0-9._-]`, with no leading dot, so `../../.ssh/id` is
//! `id.json` inside the folder and nothing can be hidden or escape.

use crate::client::Lang;

/// Longest stem kept.
const MAX_STEM_CHARS: usize = 96;

/// The description's format, from the name's extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Json,
    Yaml,
}

fn clean_stem(name: &str) -> Option<String> {
    let last = name.rsplit(['/', '\\']).next().unwrap_or("");
    let mut clean: String =
        last.chars().map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '_' }).collect();
    while clean.starts_with('.') {
        clean.remove(0);
    }
    let stem: String = clean.chars().take(MAX_STEM_CHARS).collect();
    let stem = stem.trim_end_matches('.').to_string();
    if stem.is_empty() || stem.chars().all(|c| c == '.' || c == '_' || c == '-') {
        return None;
    }
    Some(stem)
}

/// The description's file name for `name`: `.json` unless it ends in
/// `.yaml`/`.yml`; `None` when nothing usable is left.
pub fn spec_file_name(name: &str) -> Option<(String, Format)> {
    let stem = clean_stem(name)?;
    let lower = stem.to_ascii_lowercase();
    for (ext, f) in [(".yaml", Format::Yaml), (".yml", Format::Yaml), (".json", Format::Json)] {
        if lower.ends_with(ext) && stem.len() > ext.len() {
            return Some((stem, f));
        }
    }
    Some((format!("{stem}.json"), Format::Json))
}

/// The folder a client of `spec_file` is written into, next to it:
/// `library.json` → `library-python`.
pub fn client_dir_name(spec_file: &str, lang: Lang) -> Option<String> {
    let stem = clean_stem(spec_file)?;
    let lower = stem.to_ascii_lowercase();
    let base = [".yaml", ".yml", ".json"]
        .iter()
        .find(|e| lower.ends_with(*e) && stem.len() > e.len())
        .map_or(stem.as_str(), |e| &stem[..stem.len() - e.len()]);
    let suffix = match lang {
        Lang::Python => "python",
        Lang::TypeScript => "typescript",
    };
    Some(format!("{base}-{suffix}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_stay_inside_the_exports_folder() {
        let cases: &[(&str, Option<(&str, Format)>)] = &[
            ("library", Some(("library.json", Format::Json))),
            ("library.json", Some(("library.json", Format::Json))),
            ("library.yaml", Some(("library.yaml", Format::Yaml))),
            ("Lib.YML", Some(("Lib.YML", Format::Yaml))),
            ("../../etc/passwd", Some(("passwd.json", Format::Json))),
            ("..\\..\\x.yaml", Some(("x.yaml", Format::Yaml))),
            ("/abs/path/spec", Some(("spec.json", Format::Json))),
            (".hidden", Some(("hidden.json", Format::Json))),
            ("a b;rm -rf", Some(("a_b_rm_-rf.json", Format::Json))),
            (".json", Some(("json.json", Format::Json))),
            ("..", None),
            ("../", None),
            ("", None),
            ("___", None),
            ("spec.", Some(("spec.json", Format::Json))),
        ];
        for (input, want) in cases {
            let got = spec_file_name(input);
            assert_eq!(got.as_ref().map(|(n, f)| (n.as_str(), *f)), *want, "{input:?}");
        }
        assert_eq!(spec_file_name(&"x".repeat(500)).unwrap().0.len(), MAX_STEM_CHARS + 5);
    }

    #[test]
    fn client_folders_sit_next_to_their_description() {
        assert_eq!(client_dir_name("library.json", Lang::Python).as_deref(), Some("library-python"));
        assert_eq!(client_dir_name("library.yaml", Lang::TypeScript).as_deref(), Some("library-typescript"));
        assert_eq!(client_dir_name("../x/lib", Lang::Python).as_deref(), Some("lib-python"));
        assert_eq!(client_dir_name("..", Lang::Python), None);
    }
}
