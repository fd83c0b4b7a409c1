# A typical scraper: parse HTML, a few requests (to an address that does not answer), write rows.
import json, datetime, re
import requests, bs4, lxml.html, pandas
from chronomap.scraper import output

html = "<ul><li data-d='2026-05-01'>Concert</li><li data-d='2026-05-02'>Fair</li></ul>"
soup = bs4.BeautifulSoup(html, "lxml")
try:
    requests.get("http://198.51.100.77/events", timeout=1)
except requests.RequestException:
    pass
frame = pandas.DataFrame([{"title": li.text, "date": li["data-d"]} for li in soup.find_all("li")])
for row in frame.to_dict("records"):
    row["start"] = datetime.date.fromisoformat(row.pop("date")).isoformat()
    output.write_row(row)
print(json.dumps({"rows": output.row_count}), re.sub(r"\s+", " ", lxml.html.tostring(lxml.html.fromstring(html)).decode()))
output.save()
