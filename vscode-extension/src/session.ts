// One language client at a time: finds the server, starts it with the current settings, feeds
// the status bar, and restarts on demand (or when `bloatlens.server.path` changes). Settings
// changes reach the running server as workspace/didChangeConfiguration, in the server's shape.

import * as os from "node:os";
import * as path from "node:path";
import * as vscode from "vscode";
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  State,
  type LanguageClientOptions,
} from "vscode-languageclient/node";
import { statusCapability } from "./capabilities";
import { SERVER_NAME, ServerNotFound, findServer, nodeProbe, type FoundServer } from "./discovery";
import { currentServerSettings, type Manifest } from "./settings";
import { StatusBar, type ServerStatus } from "./status";

/** Where the workspace's entry point is remembered between sessions. */
const ENTRY_POINT_KEY = "bloatlens.entryPoint";

export class Session implements vscode.Disposable {
  client: LanguageClient | undefined;
  server: FoundServer | undefined;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    readonly status: StatusBar,
    /** What a click on a finding's lens does in this editor (a quick pick of its places). */
    private readonly onShowChain: (args: unknown[]) => Promise<unknown>,
  ) {
    this.subscriptions.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("bloatlens.server.path")) {
          this.log.info("bloatlens.server.path changed: restarting the server");
          void this.restart();
        } else if (e.affectsConfiguration("bloatlens") && this.client?.isRunning()) {
          void this.client.sendNotification(DidChangeConfigurationNotification.type, {
            settings: { bloatlens: currentServerSettings(this.manifest) },
          });
        }
      }),
      // Trust is the server's at start-up: granted, a new server may compile and run.
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.log.info("the workspace is trusted now: restarting the server");
        void this.restart();
      }),
    );
  }

  private get manifest(): Manifest {
    return this.context.extension.packageJSON as Manifest;
  }

  async start(): Promise<void> {
    this.status.show({ kind: "starting" });
    try {
      this.server = await findServer(
        {
          setting: vscode.workspace.getConfiguration("bloatlens").get<string>("server.path") ?? "",
          bundled: path.join(this.context.extensionPath, "server", SERVER_NAME),
          pathEnv: process.env.PATH ?? "",
          home: os.homedir(),
        },
        nodeProbe,
      );
    } catch (e) {
      const message = (e as Error).message;
      this.log.error(message);
      this.status.show({ kind: "stopped", reason: "no language server (see the output)" });
      const fix = e instanceof ServerNotFound && e.fixableInSettings ? ["Open Settings"] : [];
      void vscode.window.showErrorMessage(message, ...fix, "Show Output").then((choice) => {
        if (choice === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "bloatlens.server.path");
        if (choice === "Show Output") this.log.show();
      });
      return;
    }
    this.log.info(`server ${this.server.path} (${this.server.source}), version ${this.server.version}`);
    const options: LanguageClientOptions = {
      documentSelector: [{ scheme: "file", language: "java" }],
      // The entry point chosen in this workspace before: the server starts from it.
      initializationOptions: {
        ...currentServerSettings(this.manifest),
        entryPoint: this.context.workspaceState.get<string>(ENTRY_POINT_KEY) ?? "",
        // Workspace Trust: untrusted, the server compiles and runs nothing (trust restarts it).
        trusted: vscode.workspace.isTrusted,
      },
      outputChannel: this.log,
      traceOutputChannel: this.log,
      middleware: {
        // A finding's lens asks for its places: show them as a quick pick.
        executeCommand: (command, args, next) =>
          command === "bloatlens.showChain" ? this.onShowChain(args) : next(command, args),
      },
    };
    const client = new LanguageClient("bloatlens", "Bloatlens", { command: this.server.path, args: [] }, options);
    client.registerFeature(statusCapability);
    client.onNotification("bloatlens/status", (s: ServerStatus) => {
      // The server names the entry point as it takes it back (`test:<selector>`, `launch:<name>`).
      const entry = s.entryPoint ?? s.mainClass;
      if ((s.state === "compiling" || s.state === "running") && entry) {
        void this.context.workspaceState.update(ENTRY_POINT_KEY, entry);
      }
      this.status.show({ kind: "server", status: s });
    });
    client.onDidChangeState((e) => {
      if (e.newState === State.Stopped) this.status.show({ kind: "stopped", reason: "the server stopped (see the output)" });
    });
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      this.log.error(`the server did not start: ${(e as Error).message}`);
      this.status.show({ kind: "stopped", reason: (e as Error).message });
    }
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) {
      try {
        await client.stop(5000);
      } catch (e) {
        this.log.warn(`stopping the server: ${(e as Error).message}`);
      }
      await client.dispose();
    }
  }

  async restart(): Promise<void> {
    await this.stop();
    await this.start();
  }

  /** Runs one of the server's commands; undefined (and a message) when the server is not running. */
  async command<T>(command: string, args: unknown[]): Promise<T | undefined> {
    const client = this.client;
    if (!client?.isRunning()) {
      void vscode.window.showWarningMessage("Bloatlens: the language server is not running (see Bloatlens: Show Output).");
      return undefined;
    }
    return (await client.sendRequest(ExecuteCommandRequest.type, { command, arguments: args })) as T;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    void this.stop();
  }
}
