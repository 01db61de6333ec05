// The server's settings as the client sends them (initializationOptions, and
// workspace/didChangeConfiguration): every contributed `bloatlens.*` setting except the client's
// own, nested by its dotted name — `budgets.maxSeconds` becomes `{ budgets: { maxSeconds } }`,
// the shape of the server's `Config`. Driven by package.json, so a new setting needs no code here.

import * as vscode from "vscode";

/** Settings the extension uses itself; the server never sees them. */
const CLIENT_ONLY = ["server.", "trace."];

export interface SettingsReader {
  get<T>(key: string): T | undefined;
}

export interface Manifest {
  contributes: { configuration: { properties: Record<string, unknown> } };
}

/** The contributed setting names, without the `bloatlens.` prefix. */
export function settingKeys(manifest: Manifest): string[] {
  return Object.keys(manifest.contributes.configuration.properties)
    .filter((k) => k.startsWith("bloatlens."))
    .map((k) => k.slice("bloatlens.".length));
}

/** The server's settings from `read`. An empty string is left out: the server's default applies
 * (an empty `jdkPath` means "find the JDK", not "the JDK at ''"). */
export function serverSettings(keys: string[], read: SettingsReader): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    if (CLIENT_ONLY.some((prefix) => key.startsWith(prefix))) continue;
    const value = read.get<unknown>(key);
    if (value === undefined || value === null || value === "") continue;
    const parts = key.split(".");
    let node = out;
    for (const part of parts.slice(0, -1)) {
      node = (node[part] ??= {}) as Record<string, unknown>;
    }
    node[parts[parts.length - 1]] = value;
  }
  return out;
}

/** The server's settings as the workspace has them now. */
export function currentServerSettings(manifest: Manifest): Record<string, unknown> {
  return serverSettings(settingKeys(manifest), vscode.workspace.getConfiguration("bloatlens"));
}
