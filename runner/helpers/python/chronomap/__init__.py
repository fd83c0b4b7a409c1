"""Chronomap helpers available to scraper code (see chronomap.scraper)."""
