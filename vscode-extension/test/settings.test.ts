import assert from "node:assert/strict";
import { afterEach, test } from "node:test";
import manifest from "../package.json";
import { currentServerSettings, settingKeys } from "../src/settings";
import { settings } from "./vscode-stub";

afterEach(() => settings.clear());

test("the defaults reach the server nested as its Config, without the client's own settings", () => {
  const options = currentServerSettings(manifest);
  assert.deepEqual(Object.keys(options).sort(), [
    "analyses", "args", "bootAhead", "budgets", "classPath", "inlayHints", "mavenPath", "maxLensesPerFile",
    "profileOnSave", "quickFixes", "sandbox", "testTimeouts", "thresholds",
  ]);
  assert.equal(options.testTimeouts, "scale");
  assert.deepEqual(options.sandbox, { workspaceWrites: "overlay" });
  assert.deepEqual(options.analyses, { copy: true, refprop: true, costben: true, lifetime: true, bottleneck: true });
  assert.deepEqual(options.budgets, { maxInstructions: 2_000_000_000, maxSeconds: 60, maxHeapMb: 1024, maxStackDepth: 10000 });
  assert.equal((options.thresholds as Record<string, unknown>).bottleneckMetric, "instructions");
  assert.equal(options.profileOnSave, true);
  assert.equal(options.bootAhead, true);
  assert.equal(options.quickFixes, true);
  // Empty strings mean "the server's default": no mainClass "", no jdkPath "".
  assert.ok(!("mainClass" in options) && !("jdkPath" in options));
  assert.ok(!("server" in options) && !("trace" in options));
});

test("what the user sets is what the server gets", () => {
  settings.set("bloatlens.budgets.maxSeconds", 5);
  settings.set("bloatlens.jdkPath", "/opt/jdk-25");
  settings.set("bloatlens.mainClass", "com.example.App");
  settings.set("bloatlens.args", ["--size", "10"]);
  settings.set("bloatlens.analyses.lifetime", false);
  settings.set("bloatlens.server.path", "/somewhere/bloatlens-lsp");
  const options = currentServerSettings(manifest);
  assert.equal((options.budgets as Record<string, unknown>).maxSeconds, 5);
  assert.equal((options.budgets as Record<string, unknown>).maxHeapMb, 1024);
  assert.equal(options.jdkPath, "/opt/jdk-25");
  assert.equal(options.mainClass, "com.example.App");
  assert.deepEqual(options.args, ["--size", "10"]);
  assert.equal((options.analyses as Record<string, unknown>).lifetime, false);
  assert.ok(!("server" in options));
});

test("every contributed setting is typed, described and has a default", () => {
  const props = manifest.contributes.configuration.properties as Record<string, Record<string, unknown>>;
  for (const key of settingKeys(manifest)) {
    const p = props[`bloatlens.${key}`];
    assert.ok(typeof p.type === "string", `${key} has a type`);
    assert.ok("default" in p, `${key} has a default`);
    assert.ok(typeof p.markdownDescription === "string" && p.markdownDescription.length > 10, `${key} is described`);
  }
});

test("Restricted Mode ignores the workspace's value of every setting that names a program or a path", () => {
  const capability = (manifest as { capabilities?: { untrustedWorkspaces?: { supported: unknown; restrictedConfigurations?: string[] } } })
    .capabilities?.untrustedWorkspaces;
  assert.equal(capability?.supported, "limited");
  const restricted = new Set(capability?.restrictedConfigurations ?? []);
  const properties = manifest.contributes.configuration.properties as Record<string, unknown>;
  // Settings that name a program or a path say so in their names (`jdkPath`, `stdinFile`).
  const namesAPath = Object.keys(properties).filter((key) => /(Path|[a-z]File|\.path)$/.test(key) && !/PerFile$/.test(key));
  assert.deepEqual(namesAPath.sort(), [...restricted].sort());
});
