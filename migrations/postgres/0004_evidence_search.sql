-- Full-text search over span texts, for the search_evidence tool. Queries
-- are scoped by tenant and deal through the primary key; the index serves
-- the text match.
CREATE INDEX spans_text_search_idx ON spans USING gin (to_tsvector('english', text_excerpt));
