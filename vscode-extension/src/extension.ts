// Bloatlens for VS Code: starts the language server on the first Java file and wires its
// commands, status bar and output channel. The server does the work; see ../README.md.

import * as vscode from "vscode";
import * as commands from "./commands";
import { Session } from "./session";
import { StatusBar } from "./status";
import * as testing from "./testing";

let session: Session | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const log = vscode.window.createOutputChannel("Bloatlens", { log: true });
  const status = new StatusBar();
  const s = new Session(context, log, status, (args) => commands.pickChainHop(s, args));
  session = s;
  context.subscriptions.push(log, status, s, ...commands.register(s), ...testing.register(status));
  await s.start();
}

export async function deactivate(): Promise<void> {
  await session?.stop();
}
