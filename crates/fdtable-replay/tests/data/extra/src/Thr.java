import java.io.*; import java.nio.file.*; import java.util.concurrent.*; import java.nio.channels.*; import java.net.*;
public class Thr { public static void main(String[] a) throws Exception {
  ExecutorService ex = Executors.newFixedThreadPool(4); java.util.List<Future<?>> fs = new java.util.ArrayList<>();
  for (int i=0;i<40;i++) fs.add(ex.submit(() -> { try { for (int j=0;j<5;j++) { try (FileInputStream f = new FileInputStream("/etc/hostname")) { f.read(); } } Pipe p = Pipe.open(); p.sink().close(); p.source().close(); } catch (Exception e) { throw new RuntimeException(e);} }));
  for (Future<?> f: fs) f.get(); ex.shutdown();
  Process pr = new ProcessBuilder("cat","/etc/hostname").redirectErrorStream(true).start(); pr.getInputStream().readAllBytes(); pr.waitFor();
  try (ServerSocket ss = new ServerSocket(0)) { Socket c = new Socket("127.0.0.1", ss.getLocalPort()); Socket s = ss.accept(); c.close(); s.close(); }
  try { new FileInputStream("/nonexistent"); } catch (FileNotFoundException e) {}
}}
