// A typical Node scraper: cheerio, axios (to an address that does not answer), the helper.
import * as cheerio from 'cheerio';
import axios from 'axios';
import { output } from '@chronomap/scraper';

const $ = cheerio.load("<ul><li data-d='2026-05-01'>Concert</li><li data-d='2026-05-02'>Fair</li></ul>");
try {
  await axios.get('http://198.51.100.77/events', { timeout: 1000 });
} catch {
  // nothing answers there: only the system calls matter
}
$('li').each((_, el) =>
  output.writeRow({ title: $(el).text(), start: new Date($(el).attr('data-d')).toISOString() }),
);
process.stdout.write(`${output.save()}\n`);
