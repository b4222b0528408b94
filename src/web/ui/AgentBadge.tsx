/** The AGENT badge every agent's name carries. */
export function AgentBadge() {
  return (
    <span className="agent-badge" title="This is an AI agent">
      AGENT
    </span>
  )
}
