// The seam where a dedicated search engine (OpenSearch, Meilisearch) would replace PostgreSQL's
// full-text search; docs/performance.md ("Search at a million messages") says from which size.
// The access rules stay outside the engine: the service computes the channels the caller may
// read (`channelIds`) and the engine only searches within them. An external engine would keep
// its index from the outbox (message.created, message.updated, message.deleted), like the
// webhook planner does, return ids, ranks and snippets, and load the rows by id from PostgreSQL,
// which stays the source of truth (a hit whose message is gone is dropped).
import type { ServiceContext } from '../context.ts'
import type { SearchRow } from './search-repo.ts'

export interface SearchRequest {
  /** Web-search syntax (words, "phrases", OR, -excluded), as the API takes it. */
  text: string
  /** The channels and DMs to search in: all of them readable by the caller, never empty. */
  channelIds: string[]
  /** How many hits to return, best first. */
  limit: number
}

export interface SearchEngine {
  search(ctx: ServiceContext, request: SearchRequest): Promise<SearchRow[]>
}
