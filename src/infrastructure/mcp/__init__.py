"""`blackboard mcp`: the board served as Model Context Protocol tools over stdio (docs/mcp.md)."""
