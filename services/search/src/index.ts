export { SearchModule } from './search.module.js';
export { parseQuery, type ParsedQuery } from './queries/parse.js';
