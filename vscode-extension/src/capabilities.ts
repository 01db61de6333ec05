// What the extension tells the server it handles, beside the language client's own capabilities.

import type { StaticFeature } from "vscode-languageclient/node";

/** Asks the server for `bloatlens/status` notifications, the status bar's source, and turns off
 * the client's `window/workDoneProgress`: the language client would show the profile's progress
 * as a status-bar item of its own ("Bloatlens: profiling Main") beside ours, which already says
 * it. Registered after the client's built-in features, so its word is the last. */
export const statusCapability: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = { ...(capabilities.experimental as object | undefined), bloatlensStatus: true };
    capabilities.window = { ...capabilities.window, workDoneProgress: false };
  },
  initialize() {},
  getState: () => ({ kind: "static" }),
  clear() {},
};
