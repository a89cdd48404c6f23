"""What is wrong with a report: lint rules, the structural audit, the shape of its programs."""
