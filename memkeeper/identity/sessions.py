"""The agent session a process runs in, from what each agent really gives the processes it
starts — its hooks, its shell tool's commands, its MCP servers — so that all three act as one
identity, ``AGENT:SESSION`` (docs/reference.md, "Who is acting"). Pure: the environment is
passed in.

``human`` is the identity only where no agent's session is detected. Naming ``human`` (or a
name a trusted key signs as) from inside a session is *acting as* it, which needs a key trusted
for it (``identity.signers``): the caller checks that before it writes.
"""

from __future__ import annotations

from memkeeper.records import Record

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Collection, Mapping

HUMAN = "human"  # the identity where no agent is detected, and the owner policies name most

# (agent, the variable that holds its session id in every process it starts), in the order
# they are looked for. Each entry is what the agent was seen to set for its hooks, its shell
# tool and its MCP servers alike (docs/reference.md's table says which agent exposes what).
# A Codex session runs its shell commands with CODEX_THREAD_ID (its hooks' session_id) but
# gives its MCP servers nothing.
SESSION_VARIABLES: tuple[tuple[str, str], ...] = (
    ("claude-code", "CLAUDE_CODE_SESSION_ID"),
    ("codex", "CODEX_THREAD_ID"),
)
MAX_SESSION = 200  # characters of a session id: longer is not an id an agent made


class Session(Record):
    """An agent's session: ``agent`` (its name in memkeeper, e.g. ``claude-code``), ``id`` (the
    agent's own session id) and ``variable`` (where it was found)."""

    __slots__ = ("agent", "id", "variable")
    agent: str
    id: str
    variable: str

    def __init__(self, agent: str, id: str, variable: str) -> None:
        self._fill(agent, id, variable)

    @property
    def identity(self) -> str:
        return f"{self.agent}:{self.id}"

    def owns(self, identity: str) -> bool:
        """Whether ``identity`` is this session, or a sub-agent inside it (``AGENT:ID/SUB``)."""
        mine = self.identity
        return identity == mine or identity.startswith(mine + "/")


def detect(env: Mapping[str, str]) -> Session | None:
    """The agent session ``env`` belongs to, or None (a human's shell, a script, CI)."""
    for agent, variable in SESSION_VARIABLES:
        value = env.get(variable, "").strip()
        if value and len(value) <= MAX_SESSION and value.isprintable() and " " not in value:
            return Session(agent, value, variable)
    return None


def chosen(named: str | None, env: Mapping[str, str], default: str) -> tuple[str, Session | None]:
    """Who acts, and the session detected: ``named`` (``--agent``), else ``$MEMKEEPER_AGENT``
    (a name the user gives every process of an agent: its hook, shell and MCP server all see
    it), else the session's identity, else ``default``."""
    session = detect(env)
    found = named or env.get("MEMKEEPER_AGENT", "")
    if found:
        return found, session
    return (default, None) if session is None else (session.identity, session)


def impersonates(identity: str, session: Session | None, protected: Collection[str]) -> bool:
    """Whether acting as ``identity`` from inside ``session`` is acting as someone else who
    must prove it: ``human``, or a name a trusted key signs as (``protected``). Other names
    are labels anyone may use."""
    if session is None or session.owns(identity):
        return False
    return identity == HUMAN or identity in protected
