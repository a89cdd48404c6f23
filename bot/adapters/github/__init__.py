"""GitHub through PyGithub: authentication (token or App), and the issue tracker the mirror writes to."""
