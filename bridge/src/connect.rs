//! What `chaperone up` prints to connect an agent: the absolute path of
//! this binary (after `cargo xtask up` it is `target/debug/chaperone`,
//! which is not on the PATH) and ready-to-paste JSON for the common MCP
//! client configuration files.

use std::path::Path;

use serde_json::json;

/// The "Connect an agent" block: the stdio command with the binary's
/// absolute path, the JSON for clients with an `mcpServers` map (Claude
/// Desktop, Claude Code's `.mcp.json`, Cursor) and for VS Code (`servers`),
/// and the HTTP endpoint with where its token is.
pub fn agent_hint(bin: &Path, home: &Path, port: u16) -> String {
    let (bin_s, home_s) = (bin.to_string_lossy(), home.to_string_lossy());
    let server = json!({ "command": bin_s, "args": ["mcp", "--home", home_s] });
    let mcp_servers = json!({ "mcpServers": { "chaperone": server } });
    let vscode = json!({ "servers": { "chaperone": {
        "type": "stdio", "command": bin_s, "args": ["mcp", "--home", home_s]
    } } });
    let pretty = |v: &serde_json::Value| indent(&serde_json::to_string_pretty(v).unwrap_or_default(), "    ");
    let quoted = |s: &str| {
        if s.contains([' ', '\'', '"', '\\', '$', '`']) {
            format!("'{}'", s.replace('\'', "'\\''"))
        } else {
            s.to_string()
        }
    };
    format!(
        "Connect an agent:\n\
         \x20 command (stdio MCP):  {bin_q} mcp --home {home_q}\n\
         \x20 HTTP MCP:             http://127.0.0.1:{port}/mcp\n\
         \x20                       header Authorization: Bearer <contents of {token}>\n\
         \n\
         \x20 Claude Desktop (claude_desktop_config.json), Claude Code (.mcp.json), Cursor (~/.cursor/mcp.json):\n\
         {mcp_servers}\n\
         \n\
         \x20 VS Code (.vscode/mcp.json):\n\
         {vscode}\n\
         \n\
         \x20 Claude Code from the shell:  claude mcp add chaperone -- {bin_q} mcp --home {home_q}\n",
        bin_q = quoted(&bin_s),
        home_q = quoted(&home_s),
        token = home.join("mcp-token").display(),
        mcp_servers = pretty(&mcp_servers),
        vscode = pretty(&vscode),
    )
}

fn indent(text: &str, by: &str) -> String {
    text.lines().map(|l| format!("{by}{l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The JSON blocks in the hint, parsed back.
    fn blocks(hint: &str) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        let mut cur = String::new();
        for line in hint.lines() {
            if line == "    {" {
                cur.clear();
            }
            if line.starts_with("    ") {
                cur.push_str(line);
                cur.push('\n');
                if line == "    }" {
                    out.push(serde_json::from_str(&cur).unwrap());
                }
            }
        }
        out
    }

    #[test]
    fn the_hint_names_the_binary_absolutely_and_parses_as_json() {
        let cases = [
            ("plain paths", "/work/target/debug/chaperone", "/home/me/.config/chaperone"),
            ("a space and a quote", "/opt/my tools/chaperone", "/home/o'neil/cfg \"x\""),
        ];
        for (name, bin, home) in cases {
            let hint = agent_hint(Path::new(bin), Path::new(home), 4711);
            let found = blocks(&hint);
            assert_eq!(found.len(), 2, "{name}: {hint}");
            let want_args = json!(["mcp", "--home", home]);
            assert_eq!(found[0]["mcpServers"]["chaperone"]["command"], json!(bin), "{name}");
            assert_eq!(found[0]["mcpServers"]["chaperone"]["args"], want_args, "{name}");
            assert_eq!(found[1]["servers"]["chaperone"]["command"], json!(bin), "{name}");
            assert_eq!(found[1]["servers"]["chaperone"]["type"], json!("stdio"), "{name}");
            assert!(hint.contains("http://127.0.0.1:4711/mcp"), "{name}");
            assert!(!hint.contains(" chaperone mcp"), "{name}: a bare `chaperone` is not on the PATH: {hint}");
        }
        let spaced = agent_hint(Path::new("/opt/my tools/chaperone"), Path::new("/h"), 1);
        assert!(spaced.contains("'/opt/my tools/chaperone' mcp --home /h"), "{spaced}");
    }
}
