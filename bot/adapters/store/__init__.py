"""The store: SQLAlchemy models, Alembic migrations, and the queries sync and the CLI use."""
