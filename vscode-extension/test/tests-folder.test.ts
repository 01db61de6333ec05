import assert from "node:assert/strict";
import { test } from "node:test";
import manifest from "../package.json";
import { testsArgs } from "../src/commands";

test("Profile Tests asks the server for the tests in the folder", () => {
  const folder = "file:///w/core/src/test/java/com/acme%20shop";
  assert.deepEqual(testsArgs(folder), [folder, { testsIn: folder }]);
});

test("Profile Tests is on folders of the Explorer, not in the palette", () => {
  const command = manifest.contributes.commands.find((c) => c.command === "bloatlens.profileTests");
  assert.equal(command?.title, "Profile Tests");
  assert.equal(command?.category, "Bloatlens");
  const menus = manifest.contributes.menus as Record<string, { command: string; when?: string }[]>;
  const inExplorer = menus["explorer/context"].filter((m) => m.command === "bloatlens.profileTests");
  assert.deepEqual(
    inExplorer.map((m) => m.when),
    ["explorerResourceIsFolder"],
  );
  // It needs a folder: the palette, which gives none, does not offer it.
  assert.deepEqual(
    menus.commandPalette.filter((m) => m.command === "bloatlens.profileTests").map((m) => m.when),
    ["false"],
  );
});
