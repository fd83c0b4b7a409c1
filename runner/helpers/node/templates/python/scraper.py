"""{{name}}: a Chronomap scraper.

Runs in the Chronomap runner's Python sandbox, where requests, beautifulsoup4, lxml, pandas and
cssselect are installed (nothing else can be installed). Each row becomes an event; columns such
as title, date and location are mapped when the CSV is imported.
"""

from chronomap.scraper import output

# To scrape a real page:
#   import requests
#   from bs4 import BeautifulSoup
#   html = requests.get("https://example.org/events", timeout=30).text
#   for item in BeautifulSoup(html, "lxml").select(".event"):
#       output.write_row({"title": item.select_one("h2").get_text(strip=True), ...})


def main() -> None:
    output.write_rows([
        {"title": "Example concert", "date": "2026-06-01", "location": "Berlin, Germany"},
        {"title": "Example market", "date": "2026-06-02", "location": "Lisbon, Portugal"},
    ])
    path = output.save()
    print(f"saved {output.row_count} rows to {path}")


if __name__ == "__main__":
    main()
