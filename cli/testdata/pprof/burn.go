// burn: a CPU profile with known contents, for cli/testdata/pprof (trailmap's pprof import test).
// It burns about 1.2 s of CPU: two thirds in hotLoop (under the label phase=hot), one third in
// coldLoop (phase=cold); mix is small enough for the compiler to inline into both loops.
// Run (Go 1.19, golang-go): go build -o burn burn.go && ./burn go_cpu.pb.gz
package main

import (
	"context"
	"os"
	"runtime/pprof"
	"time"
)

var sink uint64

func mix(x uint64) uint64 { return x*6364136223846793005 + 1442695040888963407 }

//go:noinline
func hotLoop(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			sink = mix(sink)
		}
	}
}

//go:noinline
func coldLoop(d time.Duration) {
	for end := time.Now().Add(d); time.Now().Before(end); {
		for i := 0; i < 10000; i++ {
			sink = mix(sink) ^ 1
		}
	}
}

func main() {
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		panic(err)
	}
	ctx := context.Background()
	pprof.Do(ctx, pprof.Labels("phase", "hot"), func(context.Context) { hotLoop(800 * time.Millisecond) })
	pprof.Do(ctx, pprof.Labels("phase", "cold"), func(context.Context) { coldLoop(400 * time.Millisecond) })
	pprof.StopCPUProfile()
	f.Close()
}
