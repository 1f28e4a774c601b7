"""Alembic migrations, shipped inside the package so an installed blackboard can migrate."""
