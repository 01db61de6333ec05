// Real-code benchmark driver for ZXing (core): encode texts as QR codes and decode them again from
// pixels, as the core's README and its tests do (QRCodeWriter.encode, RGBLuminanceSource, HybridBinarizer,
// MultiFormatReader.decode).
import com.google.zxing.BarcodeFormat;
import com.google.zxing.BinaryBitmap;
import com.google.zxing.MultiFormatReader;
import com.google.zxing.RGBLuminanceSource;
import com.google.zxing.Result;
import com.google.zxing.common.BitMatrix;
import com.google.zxing.common.HybridBinarizer;
import com.google.zxing.qrcode.QRCodeWriter;

public class ZxingDriver {
  public static void main(String[] args) throws Exception {
    int codes = Integer.parseInt(args[0]);
    QRCodeWriter writer = new QRCodeWriter();
    MultiFormatReader reader = new MultiFormatReader();
    int decoded = 0;
    long chars = 0;
    for (int i = 0; i < codes; i++) {
      String text = "https://example.com/orders/" + (1000 + i) + "?customer=" + (i * 7919 % 10007) + "&lines=" + (i % 9 + 1);
      BitMatrix matrix = writer.encode(text, BarcodeFormat.QR_CODE, 200, 200);
      int width = matrix.getWidth(), height = matrix.getHeight();
      int[] pixels = new int[width * height];
      for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) pixels[y * width + x] = matrix.get(x, y) ? 0xFF000000 : 0xFFFFFFFF;
      }
      BinaryBitmap bitmap = new BinaryBitmap(new HybridBinarizer(new RGBLuminanceSource(width, height, pixels)));
      Result result = reader.decode(bitmap);
      if (result.getText().equals(text)) decoded++;
      chars += result.getText().length();
    }
    System.out.println("codes: " + codes + ", decoded: " + decoded + ", chars: " + chars);
  }
}
