"""Errors as every interface shows them: the families' one table of names and exit codes (families.py) and a
command model's refused value as InvalidInput naming the field as the caller spelled it (input.py)."""
