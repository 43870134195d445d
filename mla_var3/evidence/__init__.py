"""Evidence records: schema, freshness, store, verification runner, rendering for pages."""
