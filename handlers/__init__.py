"""Webhook event and comment-command handlers, one module each, composed in the explicit HANDLERS list.

Handlers parse their input and call bot.services; they never talk to PyGithub or SQLAlchemy directly.
The service issue adds the first ones (push, installation, issues); until then the list is empty.
"""

HANDLERS: tuple = ()
