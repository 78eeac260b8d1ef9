// Lists every entry of each .tgz named on the command line with Go's
// compress/gzip and archive/tar (what Helm and Flux read charts with):
// "file<TAB>typeflag<TAB>name<TAB>sha256". Exits 1 on any read error, the
// gzip trailer (CRC-32, length) included. Built by test/support/go.ts.
package main

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
)

func main() {
	for _, name := range os.Args[1:] {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		gz, err := gzip.NewReader(f)
		if err != nil {
			fmt.Fprintln(os.Stderr, name, err)
			os.Exit(1)
		}
		tr := tar.NewReader(gz)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				os.Exit(1)
			}
			sum := sha256.New()
			if _, err := io.Copy(sum, tr); err != nil {
				fmt.Fprintln(os.Stderr, name, err)
				os.Exit(1)
			}
			fmt.Printf("%s\t%c\t%s\t%s\n", name, h.Typeflag, h.Name, hex.EncodeToString(sum.Sum(nil)))
		}
		// drain: gzip checks CRC-32 and length at the end
		if _, err := io.Copy(io.Discard, gz); err != nil {
			fmt.Fprintln(os.Stderr, name, err)
			os.Exit(1)
		}
	}
}
