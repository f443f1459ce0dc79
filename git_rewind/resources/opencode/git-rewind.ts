// git-rewind for OpenCode and for Kilo (its fork): checkpoints of the working tree before edits, at
// prompts and at session events, taken by `git-rewind hook --agent <AGENT>`
// (https://github.com/…/git-rewind). Installed by `git rewind install --agent opencode` (or `kilo`),
// which writes the agent's name into AGENT; removed by `git rewind uninstall`.
//
// Every hook sends ONE JSON object on the command's stdin and waits for it (it is short: the
// checkpoint must exist before the edit runs). Nothing here ever throws into the agent: a
// failing or missing git-rewind leaves every tool and message as it was. Nothing is sent when
// the plugin is loaded (`serve`, `export` and `session list` load it too): a session starts at
// session.created.
import type { Plugin } from "@opencode-ai/plugin" // types only: erased, so nothing to install
import { spawn } from "node:child_process"

const PROGRAM: string[] = ["git-rewind"] // install writes the absolute path of this git-rewind here
const AGENT = "opencode" // the agent that loads this copy: "opencode" or "kilo"
const ARGS = ["hook", "--agent", AGENT]
const TIMEOUT_MS = 30_000
const EDIT_TOOLS = new Set(["write", "edit", "multiedit", "patch", "apply_patch"])
const SHELL_TOOLS = new Set(["bash"])
const SESSION_EVENTS = new Set(["session.created", "session.idle", "session.compacted"])

export const GitRewind: Plugin = async ({ directory, worktree, serverUrl }) => {
  const base = { host: AGENT, directory, worktree, serverUrl: serverUrl ? String(serverUrl) : null }

  const hook = (payload: Record<string, unknown>): Promise<void> =>
    new Promise((done) => {
      try {
        const child = spawn(PROGRAM[0], [...PROGRAM.slice(1), ...ARGS], {
          cwd: directory,
          stdio: ["pipe", "ignore", "ignore"],
        })
        const timer = setTimeout(() => child.kill(), TIMEOUT_MS)
        child.on("error", () => { clearTimeout(timer); done() })
        child.on("close", () => { clearTimeout(timer); done() })
        child.stdin?.on("error", () => {})
        child.stdin?.end(JSON.stringify({ ...base, ...payload }))
      } catch {
        done()
      }
    })

  const safely = async (payload: () => Record<string, unknown> | null): Promise<void> => {
    try {
      const p = payload()
      if (p) await hook(p)
    } catch {
      // never into the agent
    }
  }

  return {
    "chat.message": async (input: any, output: any) =>
      safely(() => ({
        event: "chat.message",
        sessionID: input?.sessionID ?? output?.message?.sessionID,
        messageID: output?.message?.id ?? input?.messageID ?? null,
        agent: input?.agent ?? null,
        prompt: (output?.parts ?? [])
          .filter((p: any) => p?.type === "text" && !p?.synthetic && typeof p?.text === "string")
          .map((p: any) => p.text)
          .join("\n"),
      })),
    "tool.execute.before": async (input: any, output: any) =>
      safely(() => EDIT_TOOLS.has(input?.tool) ? {
        event: "tool.execute.before", sessionID: input.sessionID, callID: input.callID ?? null,
        tool: input.tool, args: output?.args ?? {},
      } : null),
    "tool.execute.after": async (input: any, _output: any) =>
      safely(() => SHELL_TOOLS.has(input?.tool) ? {
        event: "tool.execute.after", sessionID: input.sessionID, callID: input.callID ?? null,
        tool: input.tool, args: input.args ?? {},
      } : null),
    "experimental.session.compacting": async (input: any, _output: any) =>
      safely(() => ({ event: "experimental.session.compacting", sessionID: input?.sessionID })),
    event: async ({ event }: any) =>
      safely(() => SESSION_EVENTS.has(event?.type) ? {
        event: event.type,
        sessionID: event.properties?.sessionID ?? event.properties?.info?.id,
        parentID: event.properties?.info?.parentID ?? null,
      } : null),
  }
}
