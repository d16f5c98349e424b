package postgres

import "github.com/jackc/pgx/v5/pgxpool"

// Pool returns the store's pool (connections run as the service role), for
// River's job tables, which live in the same database.
func (s *Store) Pool() *pgxpool.Pool { return s.pool }
