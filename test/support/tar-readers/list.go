// Lists tar archives (plain or gzipped) as Go's archive/tar reads them (what Helm and Flux use),
// for the differential test. Reads archive paths (one a line) on stdin; prints
// one JSON object a line: {"path", "ok", "error"?, "entries": [{"name", "type", "sha256"?}]}.
// Global and extended headers are skipped as Helm's chart loader skips them.
package main

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
)

type entry struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Sha256 string `json:"sha256,omitempty"`
}

type result struct {
	Path    string  `json:"path"`
	Ok      bool    `json:"ok"`
	Error   string  `json:"error,omitempty"`
	Entries []entry `json:"entries"`
}

func list(path string) result {
	failed := func(err error) result { return result{Path: path, Ok: false, Error: err.Error(), Entries: []entry{}} }
	file, err := os.Open(path)
	if err != nil {
		return failed(err)
	}
	defer file.Close()
	buffered := bufio.NewReader(file)
	var stream io.Reader = buffered
	if magic, _ := buffered.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		// A .tgz, read as Helm reads a chart archive: compress/gzip, which checks the header CRC.
		unzipped, err := gzip.NewReader(buffered)
		if err != nil {
			return failed(err)
		}
		defer unzipped.Close()
		stream = unzipped
	}
	reader := tar.NewReader(stream)
	out := result{Path: path, Ok: true, Entries: []entry{}}
	for {
		header, err := reader.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			return failed(err)
		}
		switch header.Typeflag {
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
			continue
		case tar.TypeReg, '\x00':
			hash := sha256.New()
			if _, err := io.Copy(hash, reader); err != nil {
				return failed(err)
			}
			out.Entries = append(out.Entries, entry{Name: header.Name, Type: "file", Sha256: hex.EncodeToString(hash.Sum(nil))})
		case tar.TypeDir:
			out.Entries = append(out.Entries, entry{Name: header.Name, Type: "dir"})
		default:
			out.Entries = append(out.Entries, entry{Name: header.Name, Type: "other:" + string(header.Typeflag)})
		}
	}
}

func main() {
	scanner := bufio.NewScanner(os.Stdin)
	encoder := json.NewEncoder(os.Stdout)
	for scanner.Scan() {
		if err := encoder.Encode(list(scanner.Text())); err != nil {
			os.Exit(1)
		}
	}
}
