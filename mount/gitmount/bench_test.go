package gitmount_test

import (
	"testing"

	"github.com/forkspace/forkspace/internal/gittest"
	"github.com/forkspace/forkspace/mount/gitmount"
)

// BenchmarkMaterialize materializes the fixture's main branch from a local
// bare repository (opened in place) and over smart HTTP (shallow fetch).
func BenchmarkMaterialize(b *testing.B) {
	fx := gittest.NewFixture(b)
	srv := gittest.Serve(b, fx.Root, "")
	for name, u := range map[string]string{"local": fx.Bare(), "http": srv.URL + "/" + fx.Name} {
		b.Run(name, func(b *testing.B) {
			m, err := gitmount.Open(gitmount.Options{URL: u, Ref: "main"})
			if err != nil {
				b.Fatal(err)
			}
			before := srv.Requests()
			b.ReportAllocs()
			for b.Loop() {
				if err := m.Materialize(b.Context(), &recorder{t: tree{}}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(srv.Requests()-before)/float64(b.N), "requests/op")
		})
	}
}
