package main
import ("os"; "os/exec"; "sync"; "net"; "fmt")
func main() {
  var wg sync.WaitGroup
  for i := 0; i < 8; i++ { wg.Add(1); go func() { defer wg.Done(); for j := 0; j < 20; j++ { f, err := os.Open("/etc/hostname"); if err == nil { f.Close() }; r, w, _ := os.Pipe(); r.Close(); w.Close() } }() }
  for i := 0; i < 4; i++ { wg.Add(1); go func() { defer wg.Done(); exec.Command("true").Run() }() }
  wg.Wait()
  l, _ := net.Listen("tcp", "127.0.0.1:0"); go func() { for { c, err := l.Accept(); if err != nil { return }; c.Close() } }()
  for i := 0; i < 5; i++ { c, err := net.Dial("tcp", l.Addr().String()); if err == nil { c.Close() } }
  l.Close(); fmt.Println("ok")
}
