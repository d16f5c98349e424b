module github.com/debated/debated

go 1.26.8
