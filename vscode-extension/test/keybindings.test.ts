import assert from "node:assert/strict";
import { test } from "node:test";
import manifest from "../package.json";

/** VS Code's default keybindings on the function keys: every `primary`/`secondary` key of the
 * workbench of code-server 4 (VS Code 1.10x, every platform's override included) and of its
 * built-in extensions. Alt+F8 / Shift+Alt+F8 are "Go to Next / Previous Problem", which the
 * problem hover advertises ("View Problem (Alt+F8)"); F8 / Shift+F8 the same across files. */
const vscodeDefaults = new Set(
  (
    "alt+f1 alt+f10 alt+f12 alt+f2 alt+f3 alt+f5 alt+f6 alt+f8 alt+f9 ctrl+f11 ctrl+f12 ctrl+f2 ctrl+f3 ctrl+f4 " +
    "ctrl+f5 ctrl+f9 ctrl+shift+f10 ctrl+shift+f12 ctrl+shift+f2 ctrl+shift+f3 ctrl+shift+f5 ctrl+shift+f9 f1 f10 " +
    "f11 f12 f2 f3 f4 f5 f6 f7 f8 f9 shift+alt+f1 shift+alt+f10 shift+alt+f2 shift+alt+f3 shift+alt+f4 " +
    "shift+alt+f5 shift+alt+f7 shift+alt+f8 shift+alt+f9 shift+f10 shift+f11 shift+f12 shift+f3 shift+f4 shift+f5 " +
    "shift+f6 shift+f7 shift+f8 shift+f9"
  ).split(" "),
);

/** `Shift+Ctrl+F8` and `ctrl+shift+f8` are one chord: modifiers in one order, lower case. */
function normal(key: string): string {
  const parts = key.toLowerCase().split("+");
  const order = ["ctrl", "shift", "alt", "meta"];
  const mods = parts.slice(0, -1).sort((a, b) => order.indexOf(a) - order.indexOf(b));
  return [...mods, parts[parts.length - 1]].join("+");
}

test("the hop keys leave VS Code's own keys alone", () => {
  const keys = manifest.contributes.keybindings.map((k) => ({ command: k.command, key: normal(k.key) }));
  assert.deepEqual(keys.map((k) => k.command).sort(), ["bloatlens.goToNextHop", "bloatlens.goToPreviousHop"]);
  for (const { command, key } of keys) {
    assert.ok(!vscodeDefaults.has(key), `${command} is bound to ${key}, one of VS Code's default keys`);
    assert.notEqual(key, "alt+f8", "Alt+F8 is VS Code's Go to Next Problem");
  }
  // Next and previous are one key, with and without Shift.
  const next = keys.find((k) => k.command === "bloatlens.goToNextHop")!.key;
  const previous = keys.find((k) => k.command === "bloatlens.goToPreviousHop")!.key;
  assert.equal(normal(next.replace(/\+(?=[^+]*$)/, "+shift+")), previous);
});

test("the docs name the keys the manifest binds", async () => {
  const { readFileSync } = await import("node:fs");
  const chord = (key: string) =>
    normal(key)
      .split("+")
      .map((p) => (p.length <= 3 && p.startsWith("f") ? p.toUpperCase() : p[0].toUpperCase() + p.slice(1)))
      .join("+");
  for (const doc of ["README.md", "../docs/editors.md", "../README.md"]) {
    const text = readFileSync(doc, "utf8");
    for (const k of manifest.contributes.keybindings) {
      assert.ok(text.includes(`**${chord(k.key)}**`), `${doc} names **${chord(k.key)}** (${k.command})`);
    }
    assert.ok(!text.includes("**Alt+F8**"), `${doc} still gives Alt+F8 as Bloatlens's key`);
  }
});
