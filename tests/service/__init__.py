"""The running service: webhooks, queue and worker, handlers, store, GitHub double, authority."""
