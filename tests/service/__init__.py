"""The running service: queue and worker, handlers, commands, store, serving, deployment, authority."""
