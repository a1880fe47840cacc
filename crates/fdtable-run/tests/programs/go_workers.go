// Go: goroutines opening files and pipes on several threads, os/exec (clone with
// CLONE_VFORK|CLONE_PIDFD), loopback TCP through the netpoller (epoll).
package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"sort"
	"sync"
)

func main() {
	var wg sync.WaitGroup
	var mu sync.Mutex
	total := 0
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				f, err := os.Open("/etc/hostname")
				if err == nil {
					f.Close()
				}
				r, w, _ := os.Pipe()
				w.Write([]byte("x"))
				b := make([]byte, 1)
				n, _ := r.Read(b)
				r.Close()
				w.Close()
				mu.Lock()
				total += n
				mu.Unlock()
			}
		}()
	}
	outs := []string{}
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			out, err := exec.Command("sh", "-c", fmt.Sprintf("echo child %d", i)).Output()
			mu.Lock()
			outs = append(outs, fmt.Sprintf("%s %v", out, err))
			mu.Unlock()
		}(i)
	}
	wg.Wait()
	sort.Strings(outs)
	fmt.Println(total, outs)
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("hi"))
			c.Close()
		}
	}()
	got := 0
	for i := 0; i < 5; i++ {
		c, err := net.Dial("tcp", l.Addr().String())
		if err == nil {
			b := make([]byte, 2)
			n, _ := c.Read(b)
			got += n
			c.Close()
		}
	}
	l.Close()
	err := exec.Command("/nonexistent").Run()
	fmt.Println("dialed", got, err != nil)
	entries, _ := os.ReadDir("/proc/self/fd")
	fmt.Println("fds listed", len(entries) > 3)
}
