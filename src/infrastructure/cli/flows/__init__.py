"""`blackboard flow`: its grammar (parser.py) and what it does (commands.py)."""
