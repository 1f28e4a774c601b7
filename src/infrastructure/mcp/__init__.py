"""`blackboard mcp`: the board served as Model Context Protocol tools over stdio (contracts/mcp.md)."""
