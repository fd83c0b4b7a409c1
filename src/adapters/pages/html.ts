// The pages' template tag lives in http/html.ts (the Explore page renders with it too, and http
// never imports admin); the admin pages import it through this name.
export { Html, html, jsonData, type Renderable, trusted } from '../http/html.ts';
