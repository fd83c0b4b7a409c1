// {{name}}: a Chronomap scraper.
//
// Runs in the Chronomap runner's Node.js sandbox, where cheerio and axios are installed
// (nothing else can be installed). Each row becomes an event; columns such as title, date and
// location are mapped when the CSV is imported.
import { output } from '@chronomap/scraper';

// To scrape a real page:
//   import axios from 'axios';
//   import * as cheerio from 'cheerio';
//   const { data } = await axios.get('https://example.org/events', { timeout: 30_000 });
//   const $ = cheerio.load(data);
//   $('.event').each((_, el) => output.writeRow({ title: $(el).find('h2').text().trim() }));

output.writeRows([
  { title: 'Example concert', date: '2026-06-01', location: 'Berlin, Germany' },
  { title: 'Example market', date: '2026-06-02', location: 'Lisbon, Portugal' },
]);
const path = output.save();
console.log(`saved ${output.rowCount} rows to ${path}`);
