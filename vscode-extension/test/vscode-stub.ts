// The parts of the `vscode` API the unit-tested modules touch, with VS Code's behaviour where
// the tests depend on it: settings read their contributed defaults from package.json unless a
// test sets them (`settings`), and status-bar items are plain records.

import manifest from "../package.json";

type Props = Record<string, { default?: unknown }>;
const properties = manifest.contributes.configuration.properties as Props;

/** What the user set, by full name (`bloatlens.budgets.maxSeconds`); tests fill and clear it. */
export const settings = new Map<string, unknown>();

export const workspace = {
  getConfiguration(section: string) {
    return {
      get<T>(key: string): T | undefined {
        const name = `${section}.${key}`;
        if (settings.has(name)) return settings.get(name) as T;
        if (name in properties) return properties[name].default as T;
        // A parent of dotted settings reads as the object of its children, as in VS Code.
        const prefix = `${name}.`;
        const children = Object.keys(properties).filter((k) => k.startsWith(prefix));
        if (children.length === 0) return undefined;
        return Object.fromEntries(children.map((k) => [k.slice(prefix.length), this.get(k.slice(section.length + 1))])) as T;
      },
    };
  },
};

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

export class ThemeColor {
  constructor(readonly id: string) {}
}

export class MarkdownString {
  isTrusted: unknown;
  constructor(readonly value: string) {}
}

export interface FakeItem {
  id: string;
  text: string;
  tooltip: unknown;
  command: unknown;
  name: string;
  backgroundColor: ThemeColor | undefined;
  visible: boolean;
  show(): void;
  dispose(): void;
}

export const items: FakeItem[] = [];

export const window = {
  createStatusBarItem(id: string): FakeItem {
    const item: FakeItem = {
      id,
      text: "",
      tooltip: undefined,
      command: undefined,
      name: "",
      backgroundColor: undefined,
      visible: false,
      show() {
        this.visible = true;
      },
      dispose() {
        this.visible = false;
      },
    };
    items.push(item);
    return item;
  },
};
