// The guide `jaggers skill install` writes for the agents: when to hand work on through jaggers, the
// MCP tools, the same through commands, and what not to improvise.

export const GUIDE = `# Working with other agents through jaggers

You run inside jaggers, beside other coding agents (each in its own tmux window and its own pinned
conversation). Use jaggers to involve them; never start another agent CLI yourself, and never resume
a conversation by hand (\`-r latest\`, \`-c\`, \`--resume\`): jaggers keeps each agent's conversation
pinned by id, and a guess would pick up someone else's.

## When

- A piece of work another agent should do, or do in parallel with you: **assign** it and go on.
- A second opinion, a review, a critique: **handoff** (you wait for the reply), or a workflow.
- Something to tell another agent without waiting: **send a message**.
- A multi-agent task (propose / critique / synthesize, adversarial review, troubleshooting until
  verified, agreement on a draft): **run a workflow**.

## The MCP tools (server \`jaggers\`; in Claude Code \`mcp__jaggers__<tool>\`)

- \`list_agents\`, \`status\`: who is there, who is idle or busy, and which one is you.
- \`handoff {agent, message, timeout}\`: hand a turn over and wait for the reply (blocking).
- \`assign {agent, message, name}\`: a background job; returns a job id at once. Its result comes back
  to your inbox as a message: you do not need to poll.
- \`wait_job {job, timeout}\`, \`job_result {job}\`: a job's state and reply.
- \`send_message {to, text}\`, \`read_inbox\`: messages to and from other agents.
- \`run_workflow {workflow, task, agents, wait}\`, \`task_status {task}\`: workflows (collaborative,
  adversarial, troubleshoot, handshake, handoff, or the project's own); the final answer comes back to
  your inbox.
- \`read_artifact {path}\`: a handover file, reply or message under \`.jaggers/\`.

## The same from your shell (when the tools are not offered)

\`\`\`sh
jaggers ls                                   # the agents and their states
jaggers status <agent>
jaggers handoff <agent> -m "..." --timeout 600   # waits, prints the reply
jaggers assign <agent> -m "..."              # prints a job id; the result comes to your inbox
jaggers wait <job> && jaggers result <job>
jaggers message <agent> -m "..."             # into its inbox
jaggers inbox <your agent name>              # ($JAGGERS_AGENT)
jaggers run collaborative -m "..." --agents <a>,<b> --detach
jaggers show <task>
\`\`\`

Your own terminal id is in \`$JAGGERS_TERMINAL_ID\`: results and answers come back to you by it.

## Good habits

- Keep a message short: say what you need and point at files (paths) rather than pasting them.
- One piece of work per job; name it (\`name\` / \`--name\`) so it is easy to find.
- A message arriving in your conversation that starts with jaggers' front matter (\`message:\`,
  \`from:\`, \`job:\`) is a result or a note from another agent: act on it as asked.
`;

export const SKILL_DESCRIPTION =
  'Hand work to the other coding agents running beside you under jaggers (handoff, background jobs, messages, workflows). Use it when work should go to another agent, when you want a second opinion or a review, or when a message from jaggers arrives.';
