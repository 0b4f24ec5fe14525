#include "rawpackets.h"

#include <arpa/inet.h>
#include <netinet/in.h>

namespace airlock::test {

namespace {

void put16(QByteArray &bytes, quint16 value)
{
    bytes.append(char(value >> 8)).append(char(value & 0xff));
}

} // namespace

quint16 internetChecksum(const QByteArray &data)
{
    quint32 sum = 0;
    for (qsizetype i = 0; i + 1 < data.size(); i += 2)
        sum += (quint8(data[i]) << 8) | quint8(data[i + 1]);
    if (data.size() % 2)
        sum += quint8(data.back()) << 8;
    while (sum >> 16)
        sum = (sum & 0xffff) + (sum >> 16);
    return quint16(~sum);
}

QByteArray macBytes(const QString &text)
{
    return QByteArray::fromHex(text.toLatin1().replace(':', QByteArray()));
}

QByteArray ipv4Bytes(const QString &address)
{
    in_addr value {};
    ::inet_pton(AF_INET, address.toLatin1().constData(), &value);
    return QByteArray(reinterpret_cast<const char *>(&value), 4);
}

QByteArray ethernetHeader(const QByteArray &destination, const QByteArray &source,
                          quint16 etherType)
{
    QByteArray frame = destination + source;
    put16(frame, etherType);
    return frame;
}

QByteArray ipv4Packet(const QString &source, const QString &destination, quint8 protocol,
                      const QByteArray &payload)
{
    QByteArray ip;
    ip.append(char(0x45)).append(char(0));
    put16(ip, quint16(20 + payload.size()));
    put16(ip, 0x1234);
    put16(ip, 0x4000); // DF
    ip.append(char(64)).append(char(protocol));
    put16(ip, 0);
    ip += ipv4Bytes(source) + ipv4Bytes(destination);
    const quint16 sum = internetChecksum(ip);
    ip[10] = char(sum >> 8);
    ip[11] = char(sum & 0xff);
    return ip + payload;
}

QByteArray udpPacket(const QString &source, const QString &destination, quint16 sourcePort,
                     quint16 destinationPort, const QByteArray &payload)
{
    QByteArray udp;
    put16(udp, sourcePort);
    put16(udp, destinationPort);
    put16(udp, quint16(8 + payload.size()));
    put16(udp, 0);
    return ipv4Packet(source, destination, IPPROTO_UDP, udp + payload);
}

QByteArray tcpSynPacket(const QString &source, const QString &destination, quint16 sourcePort,
                        quint16 destinationPort)
{
    QByteArray tcp;
    put16(tcp, sourcePort);
    put16(tcp, destinationPort);
    tcp += QByteArray::fromHex("0000abcd"); // sequence number
    tcp += QByteArray(4, '\0'); // acknowledgment number
    tcp += QByteArray::fromHex("5002"); // data offset 5, SYN
    put16(tcp, 64240); // window
    put16(tcp, 0); // checksum, below
    put16(tcp, 0); // urgent pointer
    QByteArray pseudo = ipv4Bytes(source) + ipv4Bytes(destination);
    pseudo.append(char(0)).append(char(IPPROTO_TCP));
    put16(pseudo, quint16(tcp.size()));
    const quint16 sum = internetChecksum(pseudo + tcp);
    tcp[16] = char(sum >> 8);
    tcp[17] = char(sum & 0xff);
    return ipv4Packet(source, destination, IPPROTO_TCP, tcp);
}

QByteArray arpPacket(quint16 operation, const QByteArray &senderMac, const QString &senderIp,
                     const QByteArray &targetMac, const QString &targetIp)
{
    QByteArray arp = QByteArray::fromHex("0001080006040000");
    arp[7] = char(operation);
    return arp + senderMac + ipv4Bytes(senderIp) + targetMac + ipv4Bytes(targetIp);
}

} // namespace airlock::test
