"""Alembic environment: runs on the connection the store hands over, never on a URL from a file."""
from alembic import context

from bot.adapters.store import service_models  # noqa: F401  (registers the service tables)
from bot.adapters.store.models import Base

connection = context.config.attributes["connection"]
context.configure(
    connection=connection,
    target_metadata=Base.metadata,
    render_as_batch=connection.dialect.name == "sqlite",
    compare_type=True,
)
with context.begin_transaction():
    context.run_migrations()
