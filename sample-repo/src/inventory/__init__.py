"""The sample inventory service (a prop for the memkeeper demo)."""
