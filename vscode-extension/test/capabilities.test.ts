import assert from "node:assert/strict";
import { test } from "node:test";
import type { ClientCapabilities } from "vscode-languageclient/node";
import { statusCapability } from "../src/capabilities";
import { placesArgs } from "../src/commands";

test("one progress indicator: the client asks for the status and turns the language client's progress off", () => {
  // As the language client's own features fill them before ours.
  const capabilities: ClientCapabilities = {
    window: { workDoneProgress: true, showDocument: { support: true } },
    experimental: { other: 1 },
  };
  statusCapability.fillClientCapabilities(capabilities);
  assert.equal(capabilities.window?.workDoneProgress, false, "no status-bar progress of the language client's");
  assert.deepEqual(capabilities.window?.showDocument, { support: true }, "the rest of window is kept");
  assert.deepEqual(capabilities.experimental, { other: 1, bloatlensStatus: true });
});

test("a lens's picker asks for the finding the lens names", () => {
  const lens = ["file:///w/Main.java", { line: 5, character: 4 }, { finding: "low-utility|Main.f()V|3" }];
  assert.deepEqual(placesArgs(lens), [lens[0], lens[1], { finding: "low-utility|Main.f()V|3", reveal: false }]);
  // From the palette: the cursor only.
  assert.deepEqual(placesArgs(["file:///w/Main.java", { line: 1, character: 0 }]), [
    "file:///w/Main.java",
    { line: 1, character: 0 },
    { reveal: false },
  ]);
});
