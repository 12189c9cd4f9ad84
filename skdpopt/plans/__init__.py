"""Privacy plans: frozen records, computed from public quantities only, of
everything a fit will release."""
